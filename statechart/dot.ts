/**
 * A chart (and optionally a journal overlay) as Graphviz DOT: atomic states are boxes,
 * compound states are clusters around their children, transitions are edges labelled
 * `event [guard] / intents`. Colours and shapes are explained in docs/statecharts.md.
 */
import { StateText, clusterLabel, edgeLabel, rootLabel, stateLabel } from './labels.ts';
import { within, type Chart, type ChartEdge, type ChartState } from './model.ts';
import type { Overlay } from './overlay.ts';

const q = (s: string): string => `"${s.replace(/["\\]/g, '\\$&')}"`;
const isGroup = (s: ChartState): boolean => s.kind === 'compound' || s.kind === 'parallel';
/** The node a state's transitions start and end at: a compound state's title card. */
const nodeOf = (s: ChartState): string => (isGroup(s) ? `${s.id}::title` : s.id);

const COLOUR = {
  eventless: '#6b7280',
  failed: '#b91c1c',
  effect: '#15803d',
  observed: '#1d4ed8',
  taken: '#c2410c',
  waits: '#7c3aed',
  faded: '#9ca3af',
};

/** Edge colours by where the event comes from; eventless edges are grey and dashed. */
function edgeColour(e: ChartEdge): string {
  if (e.event === '') return COLOUR.eventless;
  if (e.event.endsWith('.failed')) return COLOUR.failed;
  return e.event.startsWith('effect.') ? COLOUR.effect : COLOUR.observed;
}

/** Fill of a state: by its tags (`resting` green, `warning` amber), the final state grey. */
function stateFill(s: ChartState): string {
  if (s.tags.includes('warning')) return '#fef3c7';
  if (s.tags.includes('resting')) return '#dcfce7';
  return s.kind === 'final' ? '#e5e7eb' : '#ffffff';
}

/** Nested clusters get slightly darker fills, so depth reads at a glance. */
function depthFill(path: string): string {
  const depth = path.split('.').length - 1;
  return ['#f8fafc', '#f1f5f9', '#e8edf3', '#e2e8f0', '#cbd5e1'][Math.min(depth, 4)] ?? '#ffffff';
}

/** How the DOT is drawn beyond chart and overlay. */
export interface DotOptions {
  /** Give each transition's SVG element its chart edge id as a class (`class="edge e12"`), for the live page. */
  readonly edgeClasses?: boolean;
}

/** The DOT text of a chart, with the overlay's path and current state when given. */
export function toDot(chart: Chart, overlay?: Overlay, options: DotOptions = {}): string {
  const byId = new Map(chart.states.map((s) => [s.id, s]));
  const children = new Map<string | null, ChartState[]>();
  for (const s of chart.states) children.set(s.parent, [...(children.get(s.parent) ?? []), s]);
  const text = new StateText(chart);
  const now = overlay ? byId.get(overlay.current) : undefined;
  const current = new Set(now ? chart.states.filter((s) => within(now, s)).map((s) => s.id) : []);
  const lines: string[] = [
    `digraph ${q(chart.machine)} {`,
    '  graph [rankdir=LR, newrank=true, nodesep=0.3, ranksep=0.5, fontname="DejaVu Sans", labeljust=l, pad=0.3];',
    '  node [shape=box, style="rounded,filled", fontname="DejaVu Sans", fontsize=11, margin="0.12,0.06", color="#374151"];',
    '  edge [fontname="DejaVu Sans", fontsize=10, arrowsize=0.7];',
    `  label=<${rootLabel(chart, overlay)}>; labelloc=t;`,
  ];
  const emit = (s: ChartState, indent: string): void => {
    const here = current.has(s.id);
    const ring = here ? `, penwidth=2.5, color=${q(COLOUR.taken)}` : '';
    if (isGroup(s)) {
      const fill = q(depthFill(s.path));
      lines.push(`${indent}subgraph ${q(`cluster_${s.id}`)} {`);
      lines.push(
        `${indent}  label=""; style="rounded,filled"; fillcolor=${fill}; color=${q(here ? COLOUR.taken : '#9ca3af')}; penwidth=${here ? 2.5 : 1};`,
      );
      // The title card is a node, not the cluster's label: Graphviz routes edges round nodes only.
      lines.push(
        `${indent}  ${q(nodeOf(s))} [style=filled, color=${fill}, fillcolor=${fill}, label=<${clusterLabel(s, text)}>];`,
      );
      const initial = s.initial === null ? undefined : byId.get(s.initial);
      if (initial) lines.push(`${indent}  ${q(nodeOf(s))} -> ${q(nodeOf(initial))} [color="#9ca3af", arrowsize=0.5];`);
      for (const child of children.get(s.id) ?? []) emit(child, `${indent}  `);
      lines.push(`${indent}}`);
      return;
    }
    const fill = q(here ? '#fed7aa' : stateFill(s));
    const label = stateLabel(s, text, overlay);
    lines.push(
      `${indent}${q(s.id)} [label=<${label}>, fillcolor=${fill}, peripheries=${s.kind === 'final' ? 2 : 1}${ring}];`,
    );
  };
  // The root's own transitions apply in every state: one note lists them and starts their edges.
  const start = `${chart.root}::start`;
  const anyState = `${chart.root}::any`;
  lines.push(`  ${q(start)} [shape=circle, style=filled, fillcolor="#111827", label="", width=0.18];`);
  const rootEdges = chart.edges.filter((e) => e.source === chart.root);
  if (rootEdges.length > 0) {
    const label = `<B>in any state</B><BR/>${edgeLabel(rootEdges)}`;
    lines.push(`  ${q(anyState)} [shape=note, style=filled, fillcolor="#f3f4f6", label=<${label}>];`);
  }
  for (const s of children.get(null) ?? []) emit(s, '  ');
  const first = chart.states[0];
  if (first) lines.push(`  ${q(start)} -> ${q(nodeOf(first))};`);
  for (const e of chart.edges) {
    const src = byId.get(e.source);
    for (const target of e.targets) {
      const dst = byId.get(target);
      const line = edgeLine(e, src ? nodeOf(src) : anyState, dst ? nodeOf(dst) : target, overlay);
      lines.push(options.edgeClasses ? line.replace(/\];$/, `, class=${q(e.id)}];`) : line);
    }
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

function edgeLine(e: ChartEdge, tail: string, head: string, overlay?: Overlay): string {
  const taken = overlay?.edges.get(e.id);
  const waits = overlay?.waiting.includes(e.id) ?? false;
  const colour = taken ? COLOUR.taken : waits ? COLOUR.waits : overlay ? COLOUR.faded : edgeColour(e);
  const attrs = [`label=<${edgeLabel([e], taken)}>`, `color=${q(colour)}`, `fontcolor=${q(colour)}`];
  if (taken) attrs.push(`penwidth=${Math.min(1.5 + Math.log2(taken.count), 5).toFixed(1)}`);
  else if (waits) attrs.push('penwidth=1.8');
  if (e.event === '' || (waits && !taken)) attrs.push('style=dashed');
  return `  ${q(tail)} -> ${q(head)} [${attrs.join(', ')}];`;
}
