/**
 * The journal drawn over a chart. A journaled step records only where it started and where
 * it ended (`from`, `to`, leaf states) and the event; in between the machine may have taken
 * several transitions (the event's, then eventless ones). The overlay finds the shortest
 * such chain in the chart: the event's transition first if one applies, then `always` ones.
 */
import { within, type Chart, type ChartEdge, type ChartState } from './model.ts';

/** One journaled step, as the overlay needs it. */
export interface JournalStep {
  readonly seq: number;
  readonly event: string;
  readonly from: string;
  readonly to: string;
}

/** How often a transition was taken, and the numbers of the recent steps that took it. */
export interface EdgeUse {
  readonly count: number;
  readonly order: readonly number[];
}

/** Everything the chart shows for one object. */
export interface Overlay {
  /** `EtcdCluster default/demo`. */
  readonly object: string;
  /** The current (atomic) state's id. */
  readonly current: string;
  /** What describe says about the current state with the journaled context. */
  readonly now: { readonly step: string; readonly message: string };
  readonly lastSeq: number;
  readonly steps: number;
  /** How many of the last steps are numbered. */
  readonly numbered: number;
  readonly edges: ReadonlyMap<string, EdgeUse>;
  /** Steps that left the machine where it was, per state id. */
  readonly stays: ReadonlyMap<string, number>;
  /** Transitions out of the current state and the states around it: what it waits for. */
  readonly waiting: readonly string[];
  /** Steps whose states the chart does not have (a machine changed since). */
  readonly unmatched: number;
  /** An open intent or a failed last outcome, in words; null when none. */
  readonly problem: string | null;
}

/** The chart-independent facts an overlay starts from. */
export interface OverlayInput {
  readonly object: string;
  readonly steps: readonly JournalStep[];
  readonly stage: string;
  readonly now: Overlay['now'];
  readonly lastSeq: number;
  readonly problem: string | null;
  /** Number the last this many steps that moved (default 10). */
  readonly last?: number;
}

/** Thrown when the journal's current state is not in the chart. */
export class OverlayError extends Error {
  override readonly name = 'OverlayError';
  readonly code = 'ERR_STATECHART_STATE';
}

/** Maps every journaled step onto the chart's transitions. */
export function overlayOf(chart: Chart, input: OverlayInput): Overlay {
  const byPath = new Map(chart.states.map((s) => [s.path, s]));
  const current = byPath.get(input.stage);
  if (!current) throw new OverlayError(`state ${input.stage} is not in the ${chart.machine} machine's chart`);
  const paths = input.steps.map((step) => ({ step, path: cachedChain(chart, byPath, step) }));
  const moving = paths.filter((p) => p.path !== null && p.path.length > 0);
  const last = input.last ?? 10;
  const numberOf = new Map(moving.slice(-last).map((p, i) => [p.step.seq, i + 1]));
  const edges = new Map<string, { count: number; order: number[] }>();
  const stays = new Map<string, number>();
  for (const { step, path } of paths) {
    if (path === null) continue;
    if (path.length === 0) {
      const at = byPath.get(step.to);
      if (at) stays.set(at.id, (stays.get(at.id) ?? 0) + 1);
      continue;
    }
    for (const e of new Set(path)) {
      const use = edges.get(e.id) ?? { count: 0, order: [] };
      use.count++;
      const n = numberOf.get(step.seq);
      if (n !== undefined) use.order.push(n);
      edges.set(e.id, use);
    }
  }
  const around = chart.states.filter((s) => within(current, s)).map((s) => s.id);
  const waiting = chart.edges.filter((e) => around.includes(e.source) && e.targets.length > 0).map((e) => e.id);
  return {
    object: input.object,
    current: current.id,
    now: input.now,
    lastSeq: input.lastSeq,
    steps: input.steps.length,
    numbered: numberOf.size,
    edges,
    stays,
    waiting,
    unmatched: paths.filter((p) => p.path === null).length,
    problem: input.problem,
  };
}

// Steps repeat (a retry loop, a steady probe): each (from, event, to) is searched once per chart.
const chains = new WeakMap<Chart, Map<string, ChartEdge[] | null>>();

function cachedChain(chart: Chart, byPath: Map<string, ChartState>, step: JournalStep): ChartEdge[] | null {
  let known = chains.get(chart);
  if (!known) chains.set(chart, (known = new Map<string, ChartEdge[] | null>()));
  const key = `${step.from}\n${step.event}\n${step.to}`;
  if (!known.has(key)) known.set(key, chainOf(chart, byPath, step));
  return known.get(key) ?? null;
}

/** The transitions one step took, shortest chain first; null when the chart cannot explain it. */
export function chainOf(chart: Chart, byPath: Map<string, ChartState>, step: JournalStep): ChartEdge[] | null {
  const from = byPath.get(step.from);
  const to = byPath.get(step.to);
  if (!from || !to) return null;
  const byId = new Map(chart.states.map((s) => [s.id, s]));
  const outOf = (s: ChartState) => [...chart.states.filter((a) => within(s, a)).map((a) => a.id), chart.root];
  const leafOf = (id: string) => byId.get(byId.get(id)?.entersAt ?? '');
  // 0-1 breadth-first search over (state, event consumed?): skipping the event costs nothing.
  type Node = { at: ChartState; used: boolean; path: ChartEdge[] };
  const queue: Node[] = [{ at: from, used: false, path: [] }];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const node = queue.shift() as Node;
    const key = `${node.at.id}|${node.used}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (node.used && node.at.id === to.id) return node.path;
    if (node.path.length > 64) continue;
    const sources = outOf(node.at);
    const event = node.used ? '' : step.event;
    for (const e of chart.edges) {
      if (e.event !== event || !sources.includes(e.source)) continue;
      const next = e.targets.length > 0 ? leafOf(e.targets[0] ?? '') : node.at;
      if (next) queue.push({ at: next, used: true, path: e.targets.length > 0 ? [...node.path, e] : node.path });
    }
    if (!node.used) queue.unshift({ at: node.at, used: true, path: node.path });
  }
  return null;
}
