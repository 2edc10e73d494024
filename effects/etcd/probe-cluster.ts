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
 * Observes the cluster: ID, members (IDs in canonical hex, first peer URL, learner or not) and
 * the IDs of members whose status call answered. Throws ERR_ETCD_UNAVAILABLE when no endpoint answers.
 */
export async function probeCluster(clients: EtcdClients, cluster: ClusterRef, signal: AbortSignal): Promise<EtcdObservation> {
  let list;
  try {
    // Serializable on purpose: a cluster without quorum still shows who is in it.
    list = await onCluster({ etcd: clients, cluster, signal }, (client, o) => client.cluster.memberList({ linearizable: false }, o));
  } catch (err) {
    const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw new EffectError('ERR_ETCD_UNAVAILABLE', `etcd of ${cluster.namespace}/${cluster.name}: no endpoint answered the member list: ${why}`, { cause: err });
  }
  const members = list.members.map(memberInfo);
  const answered = await Promise.all(members.map((m) => answers(clients, cluster, m, signal)));
  return {
    clusterID: hexID(list.header.cluster_id),
    members,
    healthy: members.filter((_, i) => answered[i]).map((m) => m.id),
  };
}

/** Whether the member answers a status call itself. A member that never started has no name, so no address. */
async function answers(clients: EtcdClients, cluster: ClusterRef, member: EtcdMemberInfo, signal: AbortSignal): Promise<boolean> {
  if (member.name === '') return false;
  try {
    const status = await call(signal, clients.callTimeoutMs, (o) => clients.member(cluster, member.name).maintenance.status(o));
    return hexID(status.header.member_id) === member.id;
  } catch {
    return false;
  }
}
