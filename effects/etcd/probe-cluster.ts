import { ERR } from '../../machines/error-codes.ts';
import { quorum } from '../../machines/policy.ts';
/**
 * probeCluster: what etcd says about a cluster, as the machines observe it. The member list
 * comes from any endpoint that answers; health from each member's own status call, so a
 * member is healthy only when it answers itself, with its own ID, before the deadline.
 */
import type { EtcdMemberInfo, EtcdObservation } from '../../machines/types.ts';
import { EffectError, type ClusterRef } from '../types.ts';
import { call, memberInfo, onCluster } from './_call.ts';
import type { EtcdClients } from './clients.ts';
import { hexID } from './ids.ts';

/**
 * Observes the cluster: ID, members (IDs in canonical hex, first peer URL, learner or not), the
 * IDs of members whose status call answered, the etcd version each runs, the leader they name,
 * the voters still catching up with it, while there are learners how far each has applied the
 * log, each member's database size, and etcd's raised alarms. Throws ERR_ETCD_UNAVAILABLE when
 * no endpoint answers.
 */
export async function probeCluster(
  clients: EtcdClients,
  cluster: ClusterRef,
  signal: AbortSignal,
): Promise<EtcdObservation> {
  let list;
  try {
    // Serializable on purpose: a cluster without quorum still shows who is in it.
    list = await onCluster({ etcd: clients, cluster, signal }, (client, o) =>
      client.cluster.memberList({ linearizable: false }, o),
    );
  } catch (err) {
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new EffectError(
      ERR.ETCD_UNAVAILABLE,
      `etcd of ${cluster.namespace}/${cluster.name}: no endpoint answered the member list: ${why}`,
      { cause: err },
    );
  }
  const members = list.members.map(memberInfo);
  const statuses = await Promise.all(members.map((m) => memberStatus(clients, cluster, m, signal)));
  const leader = mostNamed(statuses.flatMap((s) => (s && s.leader !== '0' ? [s.leader] : [])));
  const leaderIndex = statuses[members.findIndex((m) => m.id === leader)]?.raftIndex;
  const learners: Record<string, { applied: number; leader: number }> = {};
  const versions: Record<string, string> = {};
  const sizes: Record<string, { dbSize: number; dbSizeInUse: number }> = {};
  const behind: string[] = [];
  const progress: Record<string, { applied: number; revision: number }> = {};
  // No leader, or fewer voters answer than a quorum (a leader that has not stepped down yet).
  const voters = members.filter((m) => !m.learner);
  const answering = voters.filter((m) => statuses[members.indexOf(m)]).length;
  const lost = leader === null || answering < quorum(voters.length);
  members.forEach((m, i) => {
    const status = statuses[i];
    if (!status) return;
    versions[m.id] = status.version;
    sizes[m.id] = { dbSize: status.dbSize, dbSizeInUse: status.dbSizeInUse };
    // Quorum lost: how far each member got, which a recovery picks its survivor by.
    if (lost) progress[m.id] = { applied: status.raftAppliedIndex, revision: status.revision };
    if (leaderIndex === undefined) return;
    if (m.learner) learners[m.id] = { applied: status.raftAppliedIndex, leader: leaderIndex };
    else if (status.raftAppliedIndex + LAG_LIMIT < leaderIndex) behind.push(m.id);
  });
  return {
    clusterID: hexID(list.header.cluster_id),
    members,
    healthy: members.filter((_, i) => statuses[i]).map((m) => m.id),
    leader,
    ...(Object.keys(learners).length > 0 ? { learners } : {}),
    ...(Object.keys(versions).length > 0 ? { versions } : {}),
    ...(behind.length > 0 ? { behind } : {}),
    ...(Object.keys(sizes).length > 0 ? { sizes } : {}),
    ...(Object.keys(progress).length > 0 ? { progress } : {}),
    ...alarmsOf(
      statuses,
      members.findIndex((m) => m.id === leader),
    ),
  };
}

/**
 * etcd's raised alarms as the leader's status call lists them (any member's, without a leader):
 * every member applies the same alarms, and the leader first. Read from the status calls already
 * made rather than from `alarm list`, which is a raft proposal: one per probe would grow the log.
 */
function alarmsOf(
  statuses: readonly (MemberStatus | null)[],
  leaderIndex: number,
): { alarms?: { memberID: string; alarm: string }[] } {
  const source = statuses[leaderIndex] ?? statuses.find((s) => s !== null);
  const alarms = (source?.errors ?? []).flatMap((text) => {
    const m = ALARM_TEXT.exec(text);
    return m ? [{ memberID: hexID(m[1]!), alarm: m[2]! }] : [];
  });
  return alarms.length > 0 ? { alarms } : {};
}

/** An alarm as a status call lists it in `errors`: `memberID:18336802762895394288 alarm:NOSPACE `. */
const ALARM_TEXT = /memberID:(\d+)\s+alarm:([A-Z]+)/;

/**
 * How many log entries a voter may trail the leader's committed index and still count as in
 * sync: a follower at rest applies within a few entries; one restarted replays or receives more.
 */
export const LAG_LIMIT = 100;

/** What one member says of itself; null unless it answers its own status call, with its own ID. */
interface MemberStatus {
  readonly version: string;
  readonly leader: string;
  readonly raftIndex: number;
  readonly raftAppliedIndex: number;
  /** The revision of its data (the status header's). */
  readonly revision: number;
  readonly dbSize: number;
  readonly dbSizeInUse: number;
  /** What etcd lists besides: the alarms it has applied, and "no leader". */
  readonly errors: readonly string[];
}

/** A member's status call. A member that never started has no name, so no address. */
async function memberStatus(
  clients: EtcdClients,
  cluster: ClusterRef,
  member: EtcdMemberInfo,
  signal: AbortSignal,
): Promise<MemberStatus | null> {
  if (member.name === '') return null;
  try {
    const status = await call(signal, clients.callTimeoutMs, (o) =>
      clients.member(cluster, member.name).maintenance.status(o),
    );
    if (hexID(status.header.member_id) !== member.id) return null;
    return {
      version: status.version,
      leader: hexID(status.leader),
      raftIndex: Number(status.raftIndex),
      raftAppliedIndex: Number(status.raftAppliedIndex),
      revision: Number(status.header.revision),
      dbSize: Number(status.dbSize),
      dbSizeInUse: Number(status.dbSizeInUse),
      errors: status.errors ?? [],
    };
  } catch {
    return null;
  }
}

/** The ID named most often (members can disagree briefly during an election); null for none. */
function mostNamed(ids: readonly string[]): string | null {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  let best: string | null = null;
  for (const [id, n] of counts) if (best === null || n > (counts.get(best) ?? 0)) best = id;
  return best;
}
