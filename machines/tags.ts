/**
 * What a state means outside the machines, declared on the states as xstate tags and read
 * with `snapshot.hasTag()` (or, for a state the journal names by its dotted path, `pathHasTag`).
 */
import type { AnyStateMachine } from 'xstate';

/** The tags the machines put on their states. */
export const TAG = {
  /** Nothing is in flight and nothing more will be tried until something changes: Progressing is False. */
  resting: 'resting',
  /** No step with a progress deadline is in flight: a cluster here is probed at the resync interval. */
  idle: 'idle',
  /** A state a user should look at: Events about it are Warnings. */
  warning: 'warning',
  /** Scaled to zero on purpose: Available and Dormant say so; no member runs, so there is no etcd to probe. */
  dormant: 'dormant',
  /** The run in flight ended here without finishing (failed, deleting): leaving a step for it completes nothing. */
  halted: 'halted',
  /** A failure trying again cannot help: Degraded says StepFailed. */
  failed: 'failed',
  /** Waiting for a healthy quorum (or the right cluster) before any change: Degraded says the step. */
  degraded: 'degraded',
  /** As the spec asks and healthy: a probe that finds it the same may wait longer for the next. */
  settled: 'settled',
} as const;

/** One of TAG. */
export type Tag = (typeof TAG)[keyof typeof TAG];

interface TaggedNode {
  readonly tags: readonly string[];
  readonly states: Readonly<Record<string, TaggedNode | undefined>>;
}

/** Whether the state at a dotted path (`scalingUp.joining.promoting`) or one of its parents carries `tag`. */
export function pathHasTag(machine: AnyStateMachine, path: string, tag: Tag): boolean {
  let node: TaggedNode | undefined = machine.root;
  for (const key of path.split('.')) {
    node = node.states[key];
    if (!node) return false;
    if (node.tags.includes(tag)) return true;
  }
  return false;
}
