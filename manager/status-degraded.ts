/**
 * The Degraded condition of an EtcdCluster: True with a reason whenever something needs a
 * person's attention (a step failed, overdue or retrying on trouble, an object the spec names
 * is wrong, a member stopped or stuck, a voter unhealthy past a short grace, quorum at risk or lost,
 * writes refused); False only when nothing does. Pure: the caller gives the time.
 */
import { ConditionReason, ConditionType, k8sTime, type ConditionInput } from '../api/conditions.ts';
import { etcdVoters, liveVoters, unhealthyVoters, type ClusterContext } from '../machines/cluster-decide.ts';
import { noSpaceRaised } from '../machines/cluster/maintenance/index.ts';
import { spaceAlarmMessage } from '../machines/cluster/maintenance/index.ts';
import { ERR } from '../machines/error-codes.ts';
import { clusterMachine } from '../machines/cluster.ts';
import { MEMBER_STATE } from '../machines/member-state.ts';
import { peerURL, quorum, troubled } from '../machines/policy.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';

/** How long a voter may be down before Degraded says so: a restart, a roll's member, a blip pass within it. */
export const UNWELL_GRACE_MS = 30_000;
/** Failed tries of a step before its retrying reads as Degraded (about 7 s of back-off). */
export const TROUBLED_TRIES = 3;

/** Codes that say an object the spec names is wrong: nothing retrying alone can fix. */
const REFERENCE_CODES: readonly string[] = [ERR.TLS_SECRET, ERR.RESTORE_SOURCE, ERR.CERT_MANAGER_MISSING];

const iso = (ms: number): string => k8sTime(new Date(ms));
const degraded = (reason: string, message: string): ConditionInput => ({
  type: ConditionType.Degraded,
  status: 'True',
  reason,
  message,
});

/** The EtcdMember names of the voters etcd does not report healthy. */
const unhealthyNames = (c: ClusterContext): string[] =>
  unhealthyVoters(c).map((v) => c.members.find((m) => peerURL(c.cluster, m.name) === v.peerURL)?.name ?? v.id);

/** A voter down past the grace: who, since when, and what it leaves of quorum. */
function unwell(c: ClusterContext, now: number): ConditionInput | null {
  if (c.target?.replicas === 0 || c.unwellSince == null || now - c.unwellSince < UNWELL_GRACE_MS) return null;
  if (liveVoters(c).length === 0) return null;
  // Quorum is counted over every voter etcd lists, as Available counts it.
  const all = etcdVoters(c);
  const voters = all.length;
  const healthy = c.etcdError ? 0 : all.filter((v) => c.etcd?.healthy.includes(v.id)).length;
  const since = ` since ${iso(c.unwellSince)}`;
  if (c.etcdError) return degraded(ConditionReason.EtcdUnreachable, `etcd has not answered${since}: ${c.etcdError}`);
  const who = `${unhealthyNames(c).join(', ')} not healthy${since}`;
  const need = quorum(voters);
  if (healthy < need)
    return degraded(ConditionReason.QuorumLost, `${who}: ${healthy} of ${voters} voters healthy, a quorum is ${need}`);
  if (healthy === need && voters > 1)
    return degraded(
      ConditionReason.QuorumAtRisk,
      `${who}: ${healthy} of ${voters} voters healthy, one more down loses quorum`,
    );
  return degraded(ConditionReason.MemberUnhealthy, `${who}: ${healthy} of ${voters} voters healthy`);
}

/**
 * When Degraded may next change with time alone: a voter unhealthy or a member stuck reaching the
 * grace. The cluster is worked then, so the status says it within the grace, not at the next event
 * (a step in flight is otherwise looked at again only at its deadline). Null when nothing is due.
 */
export function degradedDueAt(c: ClusterContext, now: number): number | null {
  const starts = [c.unwellSince, ...c.members.map((m) => (m.trouble && !m.deleting ? m.trouble.since : null))];
  const due = starts.flatMap((t) => (t == null || t + UNWELL_GRACE_MS <= now ? [] : [t + UNWELL_GRACE_MS]));
  return due.length > 0 ? Math.min(...due) : null;
}

/** The step's tries keep failing on trouble (not etcd's "not yet"): an object it names is wrong, or it retries. */
function retrying(c: ClusterContext, name: string): ConditionInput | null {
  if (!troubled(c) || !c.lastError) return null;
  const error = `${c.lastError.code}: ${c.lastError.message}`;
  if (REFERENCE_CODES.includes(c.lastError.code))
    return degraded(ConditionReason.InvalidReference, `step ${name} cannot go on: ${error}`);
  if (c.attempts < TROUBLED_TRIES) return null;
  return degraded(ConditionReason.StepRetrying, `step ${name} failed ${c.attempts} times, retrying: ${error}`);
}

/** The Degraded condition after a step to `to`, named `name` with `message`; `overdueSince` when past its deadline. */
export function degradedCondition(
  c: ClusterContext,
  to: string,
  name: string,
  message: string,
  overdueSince: string | null,
  now: number,
): ConditionInput {
  const failed = c.members.find((m) => m.state === MEMBER_STATE.failed && !m.deleting);
  if (pathHasTag(clusterMachine, to, TAG.failed)) return degraded(ConditionReason.StepFailed, message);
  if (failed)
    return degraded(
      ConditionReason.MemberFailed,
      `EtcdMember ${failed.name} stopped: ${failed.failure ?? 'see kubectl describe etcdmember'}`,
    );
  // Writes are refused: whatever step is in flight, that is what needs attention.
  if (noSpaceRaised(c)) return degraded(ConditionReason.NoSpace, spaceAlarmMessage(c));
  const wrong = retrying(c, name);
  if (wrong?.reason === ConditionReason.InvalidReference) return wrong;
  if (overdueSince !== null)
    return degraded(
      ConditionReason.ProgressDeadlineExceeded,
      `step ${name} has taken longer than ${c.progressDeadlineSeconds}s${overdueSince}: ${message}`,
    );
  if (pathHasTag(clusterMachine, to, TAG.degraded)) return degraded(name, message);
  const stuck = c.members.find((m) => m.trouble && !m.deleting && now - m.trouble.since >= UNWELL_GRACE_MS);
  if (stuck?.trouble)
    return degraded(
      ConditionReason.MemberStuck,
      `EtcdMember ${stuck.name} stuck since ${iso(stuck.trouble.since)} (${stuck.trouble.reason}): ${stuck.trouble.message}`,
    );
  const down = unwell(c, now);
  if (down) return down;
  if (wrong) return wrong;
  return {
    type: ConditionType.Degraded,
    status: 'False',
    reason: ConditionReason.Steady,
    message: 'nothing needs attention',
  };
}
