/**
 * The conditions that record a step's end (Upgraded, VolumesExpanded, Defragmented,
 * MemberReplaced...). Leaving a step says only that the machine moved on: a roll passes through
 * `observing` between members, and a claim grows after its patch. So a step whose condition
 * claims something of the world is judged by what etcd and the claims say: True once it holds,
 * False with the step's reason while its run goes on and until then.
 */
import { ConditionReason, type ConditionInput } from '../api/conditions.ts';
import type { Condition } from '../api/v1alpha1/index.ts';
import type { ClusterContext } from '../machines/cluster-decide.ts';
import type { Completion } from '../machines/cluster/concern.ts';
import { COMPLETES } from '../machines/cluster/concerns.ts';
import { clusterMachine } from '../machines/cluster.ts';
import { stepOf, type ClusterStep } from '../machines/cluster/ids.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';

/** The condition reads False with the run's reason: the run was not yet seen to hold. */
export const runOpen = (list: readonly Condition[] | undefined, type: string, reason: string): boolean =>
  list?.some((x) => x.type === type && x.status === 'False' && x.reason === reason) ?? false;

const completed = (w: Completion, c: ClusterContext): ConditionInput => ({
  type: w.condition,
  status: 'True',
  reason: ConditionReason.Completed,
  message: w.message(c),
});

/** One step kind's condition after a step from `from` to `to`; null to leave it as it is. */
function judge(
  step: ClusterStep,
  w: Completion,
  previous: readonly Condition[] | undefined,
  from: string,
  to: string,
  c: ClusterContext,
): ConditionInput | null {
  const left = stepOf(from) === step && stepOf(to) !== step;
  const run = w.running;
  if (run) {
    const open = [run.reason, ...(run.otherReasons ?? [])].some((r) => runOpen(previous, w.condition, r));
    if (stepOf(to) !== step && !left && !open) return null;
    if (w.done(c)) return completed(w, c);
    // A step that moves nothing the condition claims (a roll onto new CAs alone) leaves it as it
    // was: a member it restarts, silent meanwhile, is not one etcd has yet to answer a version from.
    if (!open && run.moves?.(c) === false) return null;
    return { type: w.condition, status: 'False', reason: run.reasonOf?.(c) ?? run.reason, message: run.message(c) };
  }
  if (!left) return null;
  if (w.done(c)) return completed(w, c);
  const short = w.unfinished?.(c);
  return short ? { type: w.condition, status: 'False', ...short } : null;
}

/** The step-end conditions to set after a step from `from` to `to`, given the conditions there are. */
export function completionConditions(
  previous: readonly Condition[] | undefined,
  from: string,
  to: string,
  c: ClusterContext,
): ConditionInput[] {
  // A step left for failed or deleting did not complete; what it said stays.
  if (pathHasTag(clusterMachine, to, TAG.halted)) return [];
  return COMPLETES.flatMap(([step, w]) => judge(step, w, previous, from, to, c) ?? []);
}
