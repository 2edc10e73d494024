/**
 * A machine's chart as plain data, read from the machine object itself (its StateNode tree
 * and transition definitions): every state, every transition with its event and guard, and
 * the intents each emits. Nothing here names a state; a new state shows up by itself.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

/** One state of the chart. */
export interface ChartState {
  /** xstate's id, e.g. `cluster.bootstrapping.seeding`. */
  readonly id: string;
  /** Dotted path below the root, as the journal writes it (`bootstrapping.seeding`). */
  readonly path: string;
  readonly key: string;
  readonly parent: string | null;
  readonly kind: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  readonly tags: readonly string[];
  /** Intents run on entry. */
  readonly intents: readonly string[];
  /** The child state a compound state starts in; null for others. */
  readonly initial: string | null;
  /** The atomic state entering this one ends in (itself when atomic). */
  readonly entersAt: string;
  /** What `describe` shows for it: step and message. */
  readonly step: string;
  readonly message: string;
}

/** One transition: from a state, on an event (or none: `always`), guarded or not, to targets. */
export interface ChartEdge {
  /** Stable index in walk order, e.g. `e12`. */
  readonly id: string;
  readonly source: string;
  /** Empty for a transition that only runs actions (it stays where it is). */
  readonly targets: readonly string[];
  /** The event type; `''` for an eventless (`always`) transition. */
  readonly event: string;
  readonly guard: string | null;
  readonly intents: readonly string[];
  /** Context updates (xstate assign actions), for the JSON form. */
  readonly updates: readonly string[];
}

/** A machine's whole chart. */
export interface Chart {
  readonly machine: string;
  readonly root: string;
  readonly states: readonly ChartState[];
  readonly edges: readonly ChartEdge[];
}

/** The step and message a user reads for a state path (machines/describe.ts). */
export type Describe = (path: string) => { readonly step: string; readonly message: string };

type Action = string | { readonly type: string; readonly params?: unknown };

/** Walks `machine.root` and returns its chart, states in document order. */
export function chartOf(machine: AnyStateMachine, describe: Describe): Chart {
  const impls = (machine.implementations.actions ?? {}) as Record<string, { type?: unknown } | undefined>;
  // An intent is an action the machine declares itself; xstate's built-ins (assign) update context.
  const isIntent = (name: string) => {
    const type = impls[name]?.type;
    return !(typeof type === 'string' && type.startsWith('xstate.'));
  };
  const names = (actions: readonly unknown[]) => (actions as Action[]).map((a) => (typeof a === 'string' ? a : a.type));
  const split = (actions: readonly unknown[]) => {
    const all = names(actions);
    return { intents: all.filter(isIntent), updates: all.filter((a) => !isIntent(a)) };
  };
  const states: ChartState[] = [];
  const edges: ChartEdge[] = [];
  const visit = (node: AnyStateNode): void => {
    const path = node.path.join('.');
    const entersAt = entryLeaf(node).id;
    const described = describe(entryLeaf(node).path.join('.'));
    if (node.parent) {
      states.push({
        id: node.id,
        path,
        key: node.key,
        parent: node.parent.parent ? node.parent.id : null,
        kind: node.type,
        tags: [...node.tags].sort(),
        intents: split(node.entry).intents,
        initial: node.type === 'compound' ? (node.initial?.target[0]?.id ?? null) : null,
        entersAt,
        step: described.step,
        message: described.message.replace(/\s+/g, ' '),
      });
    }
    const transitions = [...node.transitions.values()].flat().concat(node.always ?? []);
    for (const t of transitions) {
      edges.push({
        id: `e${edges.length}`,
        source: node.id,
        targets: (t.target ?? []).map((s: AnyStateNode) => s.id),
        event: String(t.eventType),
        guard: guardText(t.guard),
        ...split(t.actions),
      });
    }
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return { machine: machine.id, root: machine.root.id, states, edges };
}

/** The atomic state a machine ends in when it enters `node` (following initial states). */
export function entryLeaf(node: AnyStateNode): AnyStateNode {
  const next = node.type === 'compound' ? node.initial?.target[0] : undefined;
  return next ? entryLeaf(next) : node;
}

/** True when `inner` is `outer` or lies inside it. */
export const within = (inner: ChartState, outer: ChartState): boolean =>
  inner.path === outer.path || inner.path.startsWith(`${outer.path}.`);

/** `name` or `name(value, ...)` for a guard with parameters. */
function guardText(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  const g = guard as { type?: unknown; params?: unknown };
  const type = typeof g.type === 'string' ? g.type : typeof guard === 'function' ? guard.name || 'inline' : 'inline';
  if (g.params === undefined || typeof g.params === 'function') return type;
  const values = Object.values(g.params as Record<string, unknown>).map((v) => String(v));
  return `${type}(${values.join(', ')})`;
}
