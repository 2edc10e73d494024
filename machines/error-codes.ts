/**
 * Every code an effect or the runner fails with, one meaning each. Effects throw them, the
 * machines decide by them (policy.ts), the journal records them and status shows them.
 * The journal's own codes are in journal/errors.ts.
 */
export const ERR = {
  // etcd answers that mean something to a handler or a machine.
  /** etcd holds membership changes for about 5 s after the last one ("not yet"). */
  ETCD_UNHEALTHY: 'ERR_ETCD_UNHEALTHY',
  /** etcd refuses to promote a learner that has not caught up ("not yet"). */
  LEARNER_NOT_IN_SYNC: 'ERR_LEARNER_NOT_IN_SYNC',
  /** etcd allows one learner at a time. */
  TOO_MANY_LEARNERS: 'ERR_TOO_MANY_LEARNERS',
  /** etcd answered a call that names a member ID it does not know (already removed). */
  ETCD_MEMBER_UNKNOWN: 'ERR_ETCD_MEMBER_UNKNOWN',
  /** The learner to promote is not in etcd's member list: only a new addLearner brings it back. */
  MEMBER_NOT_FOUND: 'ERR_MEMBER_NOT_FOUND',
  /** etcd already has a member with this peer URL. */
  PEER_URL_EXISTS: 'ERR_PEER_URL_EXISTS',
  /** etcd refuses to promote a member that is already a voter. */
  NOT_A_LEARNER: 'ERR_NOT_A_LEARNER',
  /** No etcd endpoint answered. */
  ETCD_UNAVAILABLE: 'ERR_ETCD_UNAVAILABLE',
  /** A learner was added and never started: another cannot be added before it starts or goes. */
  UNSTARTED_MEMBER: 'ERR_UNSTARTED_MEMBER',
  /** Removing this member would leave etcd without a voter. */
  LAST_VOTER: 'ERR_LAST_VOTER',
  /** A member ID that is not hexadecimal. */
  INVALID_MEMBER_ID: 'ERR_INVALID_MEMBER_ID',
  // Each effect's own failure, when nothing more precise is known.
  ADD_LEARNER: 'ERR_ADD_LEARNER',
  PROMOTE_LEARNER: 'ERR_PROMOTE_LEARNER',
  REMOVE_MEMBER: 'ERR_REMOVE_MEMBER',
  ENSURE_SERVICES: 'ERR_ENSURE_SERVICES',
  CREATE_MEMBER: 'ERR_CREATE_MEMBER',
  DELETE_MEMBER: 'ERR_DELETE_MEMBER',
  SET_DORMANT: 'ERR_SET_DORMANT',
  SET_MEMBER_VERSION: 'ERR_SET_MEMBER_VERSION',
  SET_FORCE_NEW_CLUSTER: 'ERR_SET_FORCE_NEW_CLUSTER',
  GROW_VOLUME: 'ERR_GROW_VOLUME',
  /** The claim's StorageClass does not allow volume expansion: the API server refuses the larger size. */
  VOLUME_EXPANSION_NOT_ALLOWED: 'ERR_VOLUME_EXPANSION_NOT_ALLOWED',
  MOVE_LEADER: 'ERR_MOVE_LEADER',
  DEFRAGMENT: 'ERR_DEFRAGMENT',
  COMPACT: 'ERR_COMPACT',
  READ_REVISION: 'ERR_READ_REVISION',
  FLUSH_RAFT_LOG: 'ERR_FLUSH_RAFT_LOG',
  /** etcd's downgrade could not be enabled, or its cluster and storage versions did not come down in time. */
  ENABLE_DOWNGRADE: 'ERR_ENABLE_DOWNGRADE',
  /** etcd refuses the downgrade: its cluster version is not one minor above the target. */
  DOWNGRADE_REFUSED: 'ERR_DOWNGRADE_REFUSED',
  CANCEL_DOWNGRADE: 'ERR_CANCEL_DOWNGRADE',
  DISARM_ALARM: 'ERR_DISARM_ALARM',
  /** A member's database is still too close to its quota for the NOSPACE alarm to be disarmed. */
  SPACE_NOT_FREED: 'ERR_SPACE_NOT_FREED',
  CREATE_PVC: 'ERR_CREATE_PVC',
  CREATE_POD: 'ERR_CREATE_POD',
  DELETE_POD: 'ERR_DELETE_POD',
  RELEASE_FINALIZER: 'ERR_RELEASE_FINALIZER',
  RECORD_EVENT: 'ERR_RECORD_EVENT',
  PATCH_STATUS: 'ERR_PATCH_STATUS',
  READ_CLUSTER: 'ERR_READ_CLUSTER',
  READ_MEMBER: 'ERR_READ_MEMBER',
  READ_SNAPSHOT: 'ERR_READ_SNAPSHOT',
  ADD_FINALIZER: 'ERR_ADD_FINALIZER',
  CREATE_JOB: 'ERR_CREATE_JOB',
  DELETE_JOB: 'ERR_DELETE_JOB',
  READ_SCHEDULE: 'ERR_READ_SCHEDULE',
  CREATE_SNAPSHOT: 'ERR_CREATE_SNAPSHOT',
  DELETE_SNAPSHOT: 'ERR_DELETE_SNAPSHOT',
  SET_DISRUPTION_BUDGET: 'ERR_SET_DISRUPTION_BUDGET',
  ENSURE_CERTIFICATES: 'ERR_ENSURE_CERTIFICATES',
  /** Reading the cluster's cert-manager Certificates failed. */
  CHECK_CERTIFICATES: 'ERR_CHECK_CERTIFICATES',
  /** Turning etcd authentication on failed (adding root, granting it the role root, or AuthEnable). */
  ENABLE_AUTH: 'ERR_ENABLE_AUTH',
  // Kubernetes objects not as an effect needs them.
  /** The EtcdCluster is gone. */
  CLUSTER_GONE: 'ERR_CLUSTER_GONE',
  /** The EtcdSnapshot is gone. */
  SNAPSHOT_GONE: 'ERR_SNAPSHOT_GONE',
  /** The snapshot a cluster is to be restored from cannot be used (not Succeeded, not there). */
  RESTORE_SOURCE: 'ERR_RESTORE_SOURCE',
  /** No snapshot a recovery may restore: none named there, or not Succeeded, or its verification failed. */
  RECOVERY_SNAPSHOT: 'ERR_RECOVERY_SNAPSHOT',
  /** The snapshot a cluster is to be restored from failed its check: nothing is started from it. */
  RESTORE_VERIFY: 'ERR_RESTORE_VERIFY',
  /** A snapshot cannot be verified: nothing was recorded to check a restore against. */
  VERIFY_SNAPSHOT: 'ERR_VERIFY_SNAPSHOT',
  /**
   * A Secret spec.tls names is missing, lacks tls.crt, tls.key or ca.crt, or holds a certificate
   * that does not fit (another key, expired, not covering the member, wrong usage). Retried with
   * back-off: the operator may only get Secrets, not watch them, so the fix is seen at the next try.
   */
  TLS_SECRET: 'ERR_TLS_SECRET',
  /**
   * cert-manager's Certificate API (certificates.cert-manager.io/v1) is not served: cert-manager is
   * not installed. Retried with back-off, so installing it is what the cluster waits for.
   */
  CERT_MANAGER_MISSING: 'ERR_CERT_MANAGER_MISSING',
  /**
   * A Certificate the operator made is not Ready yet (cert-manager issuing, or failing to): a hold
   * the seeding step waits out, trouble once it lasts (policy.ts HOLD_TRIES).
   */
  CERTIFICATES_NOT_READY: 'ERR_CERTIFICATES_NOT_READY',
  /** Nothing can be created in the namespace: it is being deleted. */
  NAMESPACE_TERMINATING: 'ERR_NAMESPACE_TERMINATING',
  /** The EtcdSnapshotSchedule is gone, or is another incarnation (uid) of its name. */
  SCHEDULE_GONE: 'ERR_SCHEDULE_GONE',
  /** An EtcdSnapshot by the name a schedule's run would take was not made by that schedule. */
  CREATE_SNAPSHOT_FOREIGN: 'ERR_CREATE_SNAPSHOT_FOREIGN',
  /** An EtcdSnapshot retention would delete was not made by that schedule. */
  DELETE_SNAPSHOT_FOREIGN: 'ERR_DELETE_SNAPSHOT_FOREIGN',
  /** A Job by the name the operator would create belongs to another object. */
  CREATE_JOB_FOREIGN: 'ERR_CREATE_JOB_FOREIGN',
  /** The EtcdMember is gone: nothing can bring it back. */
  MEMBER_GONE: 'ERR_MEMBER_GONE',
  /** The object whose status is written is gone (its finalizer released). */
  PATCH_STATUS_GONE: 'ERR_PATCH_STATUS_GONE',
  /** The member's previous Pod is still terminating. */
  CREATE_POD_TERMINATING: 'ERR_CREATE_POD_TERMINATING',
  /** An object by the name the operator would create is someone else's: it is never adopted. */
  CREATE_MEMBER_FOREIGN: 'ERR_CREATE_MEMBER_FOREIGN',
  CREATE_POD_FOREIGN: 'ERR_CREATE_POD_FOREIGN',
  CREATE_PVC_FOREIGN: 'ERR_CREATE_PVC_FOREIGN',
  ENSURE_SERVICES_FOREIGN: 'ERR_ENSURE_SERVICES_FOREIGN',
  ENSURE_CERTIFICATES_FOREIGN: 'ERR_ENSURE_CERTIFICATES_FOREIGN',
  SET_DISRUPTION_BUDGET_FOREIGN: 'ERR_SET_DISRUPTION_BUDGET_FOREIGN',
  /** An EtcdMember by this name belongs to another EtcdCluster. */
  DELETE_MEMBER_FOREIGN: 'ERR_DELETE_MEMBER_FOREIGN',
  /** A Pod by this name belongs to another EtcdMember. */
  DELETE_POD_FOREIGN: 'ERR_DELETE_POD_FOREIGN',
  // The runner.
  /** A handler failed with something that is not an EffectError. */
  EFFECT: 'ERR_EFFECT',
  /** A machine asked for an intent no handler carries out. */
  NO_HANDLER: 'ERR_NO_HANDLER',
  /** A machine asked for intents in its initial state, where they cannot be journaled. */
  INITIAL_INTENTS: 'ERR_INITIAL_INTENTS',
} as const;

/** One of ERR. */
export type ErrorCode = (typeof ERR)[keyof typeof ERR];
