/**
 * The kit's builders bound to the cluster machine, for the coordinator and its concerns alike:
 * an attempt whose permanent failure goes to `#cluster.failed`, and a resting state that waits
 * for a new spec or another decision.
 */
import type { Decision } from '../cluster-decide.ts';
import type { IntentKind } from '../intents.ts';
import * as kit from '../kit.ts';
import type { Tag } from '../tags.ts';
import { CLUSTER } from './ids.ts';

/** kit.attempt on the cluster machine: run one intent, back off on failure, `#cluster.failed` when hopeless. */
export function attempt<K extends IntentKind, A extends string, C, G extends string = never>(
  onSuccess: { readonly target: string; readonly actions?: readonly A[] },
  entry: kit.IntentEntry<K, C>,
  failures: readonly { readonly guard: G; readonly target: string; readonly actions: readonly A[] }[] = [],
) {
  return kit.attempt('cluster', onSuccess, entry, failures);
}

/** A state that rests until the spec changes (latched, then decided) or the decision is no longer `decision`. */
export const restingState = <const D extends Decision, const T extends readonly Tag[]>(decision: D, tags: T) =>
  ({
    tags,
    always: [
      { guard: 'targetOutdated', target: CLUSTER.deciding, actions: 'latchTarget' },
      { guard: kit.undecided(decision), target: CLUSTER.deciding },
    ],
  }) as const;
