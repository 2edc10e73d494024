/**
 * Layout by Graphviz's `dot`, compiled to WebAssembly (@viz-js/viz): it runs in Node with no
 * binary, no network and no browser, and lays out nested clusters with labelled edges that do
 * not overlap. docs/statecharts.md says why this engine.
 */
import { instance, type Viz } from '@viz-js/viz';

let viz: Promise<Viz> | undefined;

/** Thrown when Graphviz refuses the DOT text. */
export class RenderError extends Error {
  override readonly name = 'RenderError';
  readonly code = 'ERR_STATECHART_RENDER';
}

/** Lays out DOT text and returns the SVG. */
export async function renderSvg(dot: string): Promise<string> {
  viz ??= instance();
  const result = (await viz).render(dot, { format: 'svg' });
  if (result.status !== 'success') {
    throw new RenderError(`graphviz: ${result.errors.map((e) => e.message.trim()).join('; ')}`);
  }
  const warnings = result.errors.filter((e) => e.level === 'warning');
  if (warnings.length > 0) throw new RenderError(`graphviz: ${warnings.map((e) => e.message.trim()).join('; ')}`);
  // Laid out with DejaVu Sans's metrics, among the widest sans fonts: any fallback fits the boxes.
  return result.output.replaceAll('font-family="DejaVu Sans"', `font-family="'DejaVu Sans', Verdana, sans-serif"`);
}
