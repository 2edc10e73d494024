/**
 * The etcd effect handlers, by intent kind, and the probe the runtime turns into
 * `etcd.members.listed` / `etcd.unreachable` events.
 */
import { addLearner } from './add-learner.ts';
import { compact } from './compact.ts';
import { defragment } from './defragment.ts';
import { disarmAlarm } from './disarm-alarm.ts';
import { cancelDowngrade, enableDowngrade } from './downgrade.ts';
import { enableAuth } from './enable-auth.ts';
import { flushRaftLog } from './flush-raft-log.ts';
import { moveLeader } from './move-leader.ts';
import { promoteLearner } from './promote-learner.ts';
import { removeEtcdMember } from './remove-member.ts';

export { addLearner, type AddLearnerResult } from './add-learner.ts';
export { compact, type CompactResult } from './compact.ts';
export { defragment, type DefragmentResult } from './defragment.ts';
export { disarmAlarm, type DisarmAlarmResult } from './disarm-alarm.ts';
export {
  cancelDowngrade,
  clusterVersions,
  enableDowngrade,
  type CancelDowngradeResult,
  type EnableDowngradeResult,
  type MemberVersions,
} from './downgrade.ts';
export { authStatus, enableAuth, type EnableAuthResult } from './enable-auth.ts';
export { flushRaftLog, type FlushRaftLogResult } from './flush-raft-log.ts';
export { moveLeader, type MoveLeaderResult } from './move-leader.ts';
export { promoteLearner, type PromoteLearnerResult } from './promote-learner.ts';
export { removeEtcdMember, type RemoveEtcdMemberResult } from './remove-member.ts';
export { probeCluster } from './probe-cluster.ts';
import { readRevision } from './read-revision.ts';
export {
  EtcdClients,
  type EtcdAddresses,
  type EtcdClientTLS,
  type EtcdClientsOptions,
  type EtcdContext,
  type EtcdResolver,
} from './clients.ts';
export { canonicalID, decimalID, hexID } from './ids.ts';

/** The etcd handlers by the intent kind they carry out. */
export const etcdHandlers = {
  addLearner,
  promoteLearner,
  removeEtcdMember,
  moveLeader,
  flushRaftLog,
  enableDowngrade,
  cancelDowngrade,
  defragment,
  compact,
  disarmAlarm,
  enableAuth,
  readRevision,
} as const;
