/**
 * EtcdCluster.status from the cluster machine after a step: the latched target and the step
 * in flight (status.observed), the summary conditions, one condition per completed step kind,
 * and the member summary. Pure: the caller gives the time and writes the result.
 */
import { ConditionReason, ConditionType, k8sTime, setConditions, type ConditionInput } from '../api/conditions.ts';
import type { EtcdClusterStatus, MemberSummary } from '../api/v1alpha1/index.ts';
import { etcdVoters, liveVoters, type ClusterContext } from '../machines/cluster-decide.ts';
import { holdAt } from '../machines/cluster/concerns.ts';
import { clusterMachine } from '../machines/cluster.ts';
import { describeCluster } from '../machines/describe.ts';
import { noSpaceRaised } from '../machines/cluster/maintenance/index.ts';
import { spaceAlarmMessage, spaceDisarmedMessage } from '../machines/cluster/maintenance/index.ts';
import { recoveryCondition } from '../machines/cluster/recovery/index.ts';
import { etcdMemberFor, quorum } from '../machines/policy.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';
import { LABEL } from '../effects/kubernetes/meta.ts';
import { degradedCondition } from './status-degraded.ts';
import { membershipConditions } from './status-membership.ts';
import { completionConditions } from './status-runs.ts';
import { MEMBER_STATE } from '../machines/member-state.ts';

/** What one journaled step of the cluster machine gives the status. */
export interface ClusterStep {
  readonly seq: number;
  /** The dotted state paths before and after the step. */
  readonly from: string;
  readonly to: string;
  readonly context: ClusterContext;
  readonly generation: number;
}

const iso = (ms: number): string => k8sTime(new Date(ms));

/** The status to write after `step`, given the status the object has now. */
export function clusterStatus(
  previous: EtcdClusterStatus | undefined,
  step: ClusterStep,
  now: number,
): EtcdClusterStatus {
  const c = step.context;
  const { step: name, message } = describeCluster(step.to, c);
  const voters = c.etcd ? liveVoters(c) : [];
  // The last member list stays known while etcd does not answer; its health does not.
  const healthy = c.etcdError ? 0 : voters.filter((v) => c.etcd?.healthy.includes(v.id)).length;
  // Quorum is etcd's: over every voter it lists, one without an EtcdMember too.
  const quorumVoters = etcdVoters(c);
  const quorumHealthy = c.etcdError ? 0 : quorumVoters.filter((v) => c.etcd?.healthy.includes(v.id)).length;
  const resting = pathHasTag(clusterMachine, step.to, TAG.resting);
  const overdue = !resting && now - c.stepStartedAt > c.progressDeadlineSeconds * 1000;
  const since = ` (since ${iso(c.stepStartedAt)})`;

  const set: ConditionInput[] = [
    {
      type: ConditionType.Progressing,
      status: resting ? 'False' : 'True',
      reason: name,
      message: resting ? message : `${message}${since}`,
    },
    available(c, step.to, quorumVoters.length, quorumHealthy),
    degradedCondition(c, step.to, name, message, overdue ? since : null, now),
  ];
  set.push(...completionConditions(previous?.conditions, step.from, step.to, c));
  set.push(...membershipConditions(previous?.conditions, step.from, step.to, c));
  const dormant = pathHasTag(clusterMachine, step.to, TAG.dormant);
  if (dormant || previous?.conditions?.some((x) => x.type === ConditionType.Dormant)) {
    set.push({
      type: ConditionType.Dormant,
      status: dormant ? 'True' : 'False',
      reason: dormant ? ConditionReason.ScaledToZero : name,
      message: dormant ? message : 'running',
    });
  }

  // A concern's step that holds its condition False while it rests (a refused expansion).
  const held = holdAt(step.to);
  if (held) set.push({ type: held.condition, status: 'False', reason: held.reason, message });
  // Shown from the first alarm on: True at once, whatever step is in flight; False once it is gone.
  if (noSpaceRaised(c) || previous?.conditions?.some((x) => x.type === ConditionType.SpaceAlarm)) {
    set.push(
      noSpaceRaised(c)
        ? {
            type: ConditionType.SpaceAlarm,
            status: 'True',
            reason: ConditionReason.NoSpace,
            message: spaceAlarmMessage(c),
          }
        : {
            type: ConditionType.SpaceAlarm,
            status: 'False',
            reason: ConditionReason.NoAlarm,
            message: spaceDisarmedMessage(c),
          },
    );
  }
  // A recovery asked in spec.recovery: in flight, done, or refused (with why), from the first on.
  const recovery = recoveryCondition(c);
  if (recovery) set.push({ type: ConditionType.Recovered, ...recovery });
  const conditions = setConditions(previous?.conditions, set, step.generation, new Date(now));
  return {
    observedGeneration: step.generation,
    observed: {
      ...(c.target ? { target: { replicas: c.target.replicas, version: c.target.version } } : {}),
      step: name,
      sequence: step.seq,
      stepStartedAt: iso(c.stepStartedAt),
    },
    conditions,
    readyMembers: healthy,
    members: members(c),
    ...(c.clusterID ? { clusterID: c.clusterID } : {}),
    ...runningVersion(c, previous?.version),
    selector: `${LABEL.cluster}=${c.cluster.name}`,
    ...handledRecovery(c, previous),
  };
}

/** status.recovery: how the last request ended; kept as it was for a machine that does not know (its journal lost). */
function handledRecovery(
  c: ClusterContext,
  previous: EtcdClusterStatus | undefined,
): Pick<EtcdClusterStatus, 'recovery'> {
  const r = c.recovered;
  if (!r) return previous?.recovery ? { recovery: previous.recovery } : {};
  const result = r.result === 'recovered' ? ('Recovered' as const) : ('Refused' as const);
  return { recovery: { requestID: r.requestID, result, time: iso(r.at) } };
}

/** Available False at zero replicas, a state the user asked for: said as such, not as an outage. */
function dormant(c: ClusterContext, to: string): ConditionInput {
  const message =
    c.members.length === 0
      ? 'scaled to zero on purpose: no member runs; scale up to start the cluster'
      : pathHasTag(clusterMachine, to, TAG.dormant)
        ? 'scaled to zero on purpose: no member runs; volumes are kept; scale up to resume'
        : 'scaling to zero on purpose: members are stopping; volumes are kept; scale up to resume';
  return { type: ConditionType.Available, status: 'False', reason: ConditionReason.Dormant, message };
}

function available(c: ClusterContext, to: string, voters: number, healthy: number): ConditionInput {
  // Parking answers while its Pods stop; once none does, its silence is the point.
  if (c.target?.replicas === 0 && (pathHasTag(clusterMachine, to, TAG.dormant) || voters === 0 || c.etcdError))
    return dormant(c, to);
  if (voters === 0)
    return {
      type: ConditionType.Available,
      status: 'False',
      reason: ConditionReason.Pending,
      message: 'no voting member runs',
    };
  if (c.etcdError)
    return {
      type: ConditionType.Available,
      status: 'False',
      reason: ConditionReason.EtcdUnreachable,
      message: `etcd does not answer: ${c.etcdError}`,
    };
  return healthy >= quorum(voters)
    ? {
        type: ConditionType.Available,
        status: 'True',
        reason: ConditionReason.QuorumHealthy,
        message: `${healthy} of ${voters} voters healthy`,
      }
    : {
        type: ConditionType.Available,
        status: 'False',
        reason: ConditionReason.QuorumLost,
        message: `${healthy} of ${voters} voters healthy; a quorum is ${quorum(voters)}`,
      };
}

/** The version a member runs: what etcd answers with, else what its EtcdMember asks for. */
const versionOf = (c: ClusterContext, m: ClusterContext['members'][number]): string | undefined =>
  answering(c, m) ?? m.version;

/** The version etcd answers with from this member, if it answers. */
const answering = (c: ClusterContext, m: ClusterContext['members'][number]): string | undefined => {
  const info = etcdMemberFor(c.cluster, c.etcd, m.name);
  return info ? c.etcd?.versions?.[info.id] : undefined;
};

/** Numeric order of two x.y.z versions. */
const byVersion = (a: string, b: string): number => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x?.[i] ?? 0) !== (y?.[i] ?? 0)) return (x?.[i] ?? 0) - (y?.[i] ?? 0);
  return 0;
};

/**
 * status.version: the oldest version a member runs (the one a rolled-back spec may return to).
 * A member counts by the version etcd answers from it with, or its spec's once it is a voter at
 * rest; one that does not run (stuck on a version it cannot start) does not count, and with none
 * counted the previous value stays.
 */
function runningVersion(c: ClusterContext, previous: string | undefined): { version?: string } {
  const versions = c.members
    .filter((m) => !m.deleting)
    .flatMap((m) => answering(c, m) ?? (m.state === MEMBER_STATE.voter && !c.etcdError ? m.version : undefined) ?? []);
  const oldest = versions.sort(byVersion)[0] ?? previous;
  return oldest ? { version: oldest } : {};
}

function members(c: ClusterContext): MemberSummary[] {
  return c.members.map((m) => {
    const info = etcdMemberFor(c.cluster, c.etcd, m.name);
    const version = versionOf(c, m);
    return {
      name: m.name,
      ...(info ? { memberID: info.id, role: info.learner ? ('learner' as const) : ('voter' as const) } : {}),
      state: m.state,
      ...(version ? { version } : {}),
    };
  });
}
