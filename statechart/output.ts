/** A chart, with or without an overlay, in one of the output formats. */
import { toDot, type DotOptions } from './dot.ts';
import type { Chart } from './model.ts';
import type { Overlay } from './overlay.ts';
import { renderSvg } from './render.ts';

/** The formats `statechart` writes. */
export const FORMATS = ['svg', 'dot', 'json'] as const;
/** One of {@link FORMATS}. */
export type Format = (typeof FORMATS)[number];

/** True when `f` is a known format. */
export const isFormat = (f: string): f is Format => (FORMATS as readonly string[]).includes(f);

/** SVG laid out by Graphviz, the DOT it is laid out from, or the chart and overlay as JSON. */
export async function renderChart(
  chart: Chart,
  format: Format,
  overlay?: Overlay,
  options: DotOptions = {},
): Promise<string> {
  if (format === 'dot') return toDot(chart, overlay, options);
  if (format === 'svg') return renderSvg(toDot(chart, overlay, options));
  const plain = overlay && {
    ...overlay,
    edges: Object.fromEntries(overlay.edges),
    stays: Object.fromEntries(overlay.stays),
  };
  return `${JSON.stringify({ chart, ...(plain ? { overlay: plain } : {}) }, null, 2)}\n`;
}
