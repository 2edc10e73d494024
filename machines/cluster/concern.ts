/**
 * What a concern of the cluster machine (the roll, maintenance, volumes) says about itself, so
 * that describe.ts and the manager's status only assemble: each of its steps' messages, and
 * the condition a step records once left, with when leaving it counts as done.
 */
import type { ConditionTypeName } from '../../api/conditions.ts';
import type { ClusterContext } from '../cluster-decide.ts';
import type { ClusterStep } from './ids.ts';

/** The condition a step records once it is left, and whether leaving it finished it. */
export interface Completion {
  readonly condition: ConditionTypeName;
  readonly message: (c: ClusterContext) => string;
  /** What the condition claims is true now (etcd, the claims say so), not only that the step was left. */
  readonly done: (c: ClusterContext) => boolean;
  /**
   * A run that spans steps (a roll's members, claims that grow after their patch): False with this
   * reason while it runs, and from when it is left until `done`, judged again at every step.
   * Absent: judged once, when the step is left.
   */
  readonly running?: {
    readonly reason: string;
    readonly message: (c: ClusterContext) => string;
    /** A run that can go two ways (a roll up or down): its reason now, one of `reason` and `otherReasons`. */
    readonly reasonOf?: (c: ClusterContext) => string;
    readonly otherReasons?: readonly string[];
    /**
     * Whether the step moves what the condition claims (a roll: a version); one that does not (a
     * roll onto new CAs alone) leaves it as it was while not done, unless a run is open. Absent: every step does.
     */
    readonly moves?: (c: ClusterContext) => boolean;
  };
  /** Why a step left not done fell short, when a user should read it (False); null leaves the condition as it was. */
  readonly unfinished?: (c: ClusterContext) => { readonly reason: string; readonly message: string } | null;
}

/** A concern's own words, by step (top-level state). */
export interface ConcernWords {
  /** What a user reads in each of its steps; `sub` is the path under the step. */
  readonly describe: Readonly<Partial<Record<ClusterStep, (sub: string, c: ClusterContext) => string>>>;
  /** Steps named by where they go (a roll up or down): the name now; absent, the state's name capitalised. */
  readonly names?: Readonly<Partial<Record<ClusterStep, (c: ClusterContext) => string>>>;
  /** The steps whose end is a condition of its own, each with its `done`. */
  readonly completes: Readonly<Partial<Record<ClusterStep, Completion>>>;
  /** Steps that hold a condition False, with the step's message, while the machine rests in them. */
  readonly holds?: Readonly<Partial<Record<ClusterStep, Hold>>>;
}

/** A condition held False while a step rests: its type and reason (api/conditions.ts). */
export interface Hold {
  readonly condition: ConditionTypeName;
  readonly reason: string;
}

/** `; then the new spec is taken: ...` when the spec changed since the target was latched. */
export function retarget(c: ClusterContext): string {
  const [spec, target] = [c.spec, c.target];
  if (!spec || !target) return '';
  const changes = [
    ...(spec.replicas !== target.replicas ? [`${spec.replicas} voters (was ${target.replicas})`] : []),
    ...(spec.version !== target.version ? [`etcd ${spec.version} (was ${target.version})`] : []),
  ];
  return changes.length > 0 ? `; then the new spec is taken: ${changes.join(', ')}` : '';
}
