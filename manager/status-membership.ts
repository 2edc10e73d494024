/**
 * The conditions that record a finished membership run: Bootstrapped, ScaledUp, ScaledDown.
 * A run adds or removes one member per step and passes through `observing` between two, so
 * leaving the step says nothing: a run is done once etcd lists the target's voters. Until
 * then ScaledUp/ScaledDown read False with the step's name (what keeps the run in mind across
 * the `observing` between members), and a run overtaken by the opposite one says so.
 */
import { ConditionReason, ConditionType, type ConditionInput } from '../api/conditions.ts';
import type { Condition } from '../api/v1alpha1/index.ts';
import { liveVoters, type ClusterContext } from '../machines/cluster-decide.ts';
import { clusterMachine } from '../machines/cluster.ts';
import { membershipRun } from '../machines/cluster/concerns.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';
import { runOpen } from './status-runs.ts';

/** etcd's fresh list shows exactly the target's voters. */
const reached = (c: ClusterContext): boolean =>
  c.target !== null && !c.etcdStale && c.etcd !== null && liveVoters(c).length === c.target.replicas;

const voterCount = (c: ClusterContext): number => (c.etcd ? liveVoters(c).length : 0);

/** A scaling run: the machine's run, its condition, the reason it reads while it runs, and the words for it. */
const RUNS = [
  {
    run: 'up',
    type: ConditionType.ScaledUp,
    runningReason: ConditionReason.ScalingUp,
    finished: 'scaled up',
    running: 'scaling up',
  },
  {
    run: 'down',
    type: ConditionType.ScaledDown,
    runningReason: ConditionReason.ScalingDown,
    finished: 'scaled down',
    running: 'scaling down',
  },
] as const;

/** The membership conditions to set after a step from `from` to `to`, given the conditions there are. */
export function membershipConditions(
  previous: readonly Condition[] | undefined,
  from: string,
  to: string,
  c: ClusterContext,
): ConditionInput[] {
  // A run left for failed or deleting did not finish; what it said stays.
  if (pathHasTag(clusterMachine, to, TAG.halted)) return [];
  const set: ConditionInput[] = [];
  // The machine marks itself bootstrapped when it first rests at the target.
  if (c.bootstrapped && !previous?.some((x) => x.type === ConditionType.Bootstrapped && x.status === 'True'))
    set.push({
      type: ConditionType.Bootstrapped,
      status: 'True',
      reason: ConditionReason.Completed,
      message: `etcd cluster ${c.clusterID ?? 'with no ID yet'} started from a seed and grew to ${voterCount(c)} voters`,
    });
  const wanted = c.target?.replicas ?? 0;
  for (const run of RUNS) {
    const inRun = membershipRun(from) === run.run || runOpen(previous, run.type, run.runningReason);
    if (!inRun || membershipRun(to) === run.run) continue;
    const opposite = RUNS.find((r) => r !== run && r.run === membershipRun(to));
    if (opposite)
      set.push({
        type: run.type,
        status: 'False',
        reason: ConditionReason.Superseded,
        message: `overtaken at ${voterCount(c)} voters by ${opposite.running} to ${wanted}`,
      });
    else if (reached(c))
      set.push({
        type: run.type,
        status: 'True',
        reason: ConditionReason.Completed,
        message: `${run.finished} to ${wanted} voters`,
      });
    else
      set.push({
        type: run.type,
        status: 'False',
        reason: run.runningReason,
        message: `${run.running} to ${wanted} voters: ${voterCount(c)} so far`,
      });
  }
  return set;
}
