/**
 * The intents the machines ask for and their parameters, defined once: the machines build
 * them, the journal records them, and each effect handler takes its parameters from here.
 * Plain data only: every value is journaled as JSON.
 */

/** Parameters of an intent about one EtcdMember (its Pod, volume, finalizer or object). */
export interface MemberParams {
  readonly member: string;
}

/** Parameters of forceDeletePod: the member, and the uid of the Pod its lost node can no longer confirm gone. */
export interface ForceDeletePodParams extends MemberParams {
  readonly uid: string;
}

/** Parameters of ensureServices: the cluster whose Services are made. */
export interface EnsureServicesParams {
  readonly cluster: string;
}

/** Parameters of ensureCertificates: the cluster whose cert-manager Certificates are made. */
export interface EnsureCertificatesParams {
  readonly cluster: string;
}

/** Parameters of checkCertificates: the cluster whose cert-manager Certificates must be Ready. */
export interface CheckCertificatesParams {
  readonly cluster: string;
}

/** Parameters of enableAuth: the cluster whose etcd gets the user root and authentication on. */
export interface EnableAuthParams {
  readonly cluster: string;
}

/** Parameters of createMember: everything the EtcdMember's spec is built from. */
export interface CreateMemberParams {
  readonly member: string;
  readonly ordinal: number;
  readonly bootstrap: boolean;
  readonly initialCluster: string;
  readonly version: string;
  /** The CA digest its Pod starts with (ClusterTarget.trust); absent without TLS. */
  readonly trust?: string;
  /** A recovery's seed: the EtcdSnapshot its data dir is restored from (else spec.bootstrap.restore's, for a seed). */
  readonly restoreFrom?: string;
}

/** Parameters of addLearner: the member to add and the peer URL it will listen on. */
export interface AddLearnerParams {
  readonly member: string;
  readonly peerURL: string;
}

/** Parameters of promoteLearner. */
export interface PromoteLearnerParams {
  readonly member: string;
  /** Hex ID, as addLearner returned it. */
  readonly memberID: string;
}

/**
 * Which etcd member to remove. Names are never reused, so a peer URL names one incarnation
 * of a member: the handler removes the member with this peer URL (or this ID, for an orphan
 * etcd reports without a matching EtcdMember), and finding none counts as done.
 */
export interface RemoveEtcdMemberParams {
  readonly peerURL: string;
  readonly memberID: string | null;
  readonly reason: string;
}

/**
 * Parameters of setMemberVersion: the member whose Pod is to run another etcd version, or start
 * again to trust other CAs (a new digest of its Secrets' ca.crt), or both at once.
 */
export interface SetMemberVersionParams {
  readonly member: string;
  readonly version: string;
  /** Absent: its trust is left as it is (no TLS). */
  readonly trust?: string;
}

/**
 * Parameters of growVolume: the member whose PersistentVolumeClaim is asked to grow, and the size
 * (a quantity, as spec.storage.size writes it). A claim already asking for as much is left alone.
 */
/**
 * Parameters of setForceNewCluster: the survivor of a recovery from a lost quorum, whose Pod is to
 * start etcd with --force-new-cluster once (requestID), or plainly again (null).
 */
export interface SetForceNewClusterParams {
  readonly member: string;
  readonly requestID: string | null;
}

/**
 * Parameters of resolveRecoverySnapshot: which EtcdSnapshot a recovery from a snapshot restores,
 * the one named, or the newest Succeeded one of the cluster whose verification did not fail.
 */
export interface ResolveRecoverySnapshotParams {
  readonly cluster: string;
  readonly requestID: string;
  readonly snapshotName?: string;
}

/** Parameters of readRevision: the cluster whose revision a rollback reads before it stops anything. */
export interface ReadRevisionParams {
  readonly cluster: string;
}

export interface GrowVolumeParams {
  readonly member: string;
  readonly size: string;
}

/**
 * Parameters of flushRaftLog: how many entries to commit so that every member writes its raft
 * log to a snapshot on disk (etcd's --snapshot-count, plus one), and the version it is for.
 */
export interface FlushRaftLogParams {
  readonly entries: number;
  readonly version: string;
}

/**
 * Parameters of enableDowngrade and cancelDowngrade: the version a roll goes to. A downgrade
 * brings etcd's cluster and storage versions down to its minor before any member restarts on it;
 * a cancel ends a downgrade a roll back up leaves behind.
 */
export interface DowngradeParams {
  readonly version: string;
}

/** Parameters of moveLeader: the leader to move leadership off, and the voter to give it to. */
export interface MoveLeaderParams {
  /** The member leadership moves off (by name and hex ID). */
  readonly member: string;
  readonly memberID: string;
  /** The voter that becomes leader (hex ID). */
  readonly toID: string;
}

/** Parameters of defragment: the member whose backend database is rebuilt (by name and hex ID). */
export interface DefragmentParams {
  readonly member: string;
  readonly memberID: string;
}

/**
 * Parameters of compact: why the key-value history is compacted to the current revision (only
 * etcd's NOSPACE alarm asks for it; auto-compaction, when set, does the rest).
 */
export interface CompactParams {
  readonly reason: 'NOSPACE';
}

/**
 * Parameters of disarmAlarm: the NOSPACE alarm is disarmed only once every member's database is
 * at most `limitBytes` (the quota less a margin), so the next writes do not raise it again at once.
 */
export interface DisarmAlarmParams {
  /** The backend quota the members run with, in bytes (spec.options.quotaBackendBytes or etcd's 2 GiB). */
  readonly quotaBytes: number;
  readonly limitBytes: number;
}

/** Parameters of createUpgradeSnapshot: the snapshot a roll to `version` takes first. */
export interface CreateUpgradeSnapshotParams {
  readonly cluster: string;
  readonly name: string;
  readonly version: string;
}

/** Parameters of setDormant: the members to park or wake. */
export interface SetDormantParams {
  readonly members: readonly string[];
  readonly dormant: boolean;
  /**
   * Waking: the CA digest their Pods are to start with, set in the same patch, so CAs changed
   * while the cluster was parked cost no roll after it wakes. Absent without TLS, and parking.
   */
  readonly trust?: string;
}

/**
 * Parameters of setDisruptionBudget: the minAvailable of the PodDisruptionBudget over the
 * cluster's member Pods; null when the cluster has none (scaled to zero): an existing one goes.
 */
export interface DisruptionBudgetParams {
  readonly cluster: string;
  readonly minAvailable: number | null;
}

/** Parameters of an intent about one EtcdSnapshot (its finalizer, its Jobs). */
export interface SnapshotParams {
  readonly snapshot: string;
}

/**
 * Prefix of the finalizer an EtcdCluster puts on the EtcdSnapshot it restores from, the cluster's
 * name after it (at most 50 characters, within a finalizer's 63): while it is on, deleting the
 * EtcdSnapshot keeps what it stored (Kubernetes' in-use protection of a PVC, for a snapshot).
 * Here, not in effects/kubernetes/meta.ts (which re-exports it), so that what the snapshot machine
 * says names the finalizer the effects put on.
 */
export const HOLD_FINALIZER_PREFIX = 'restoring.etcd-operator.dev/';
/** The finalizer by which EtcdCluster `cluster` holds the EtcdSnapshot it restores from. */
export const holdFinalizer = (cluster: string): string => `${HOLD_FINALIZER_PREFIX}${cluster}`;

/**
 * Parameters of holdSnapshot and releaseSnapshotHold: the EtcdSnapshot a cluster restores from,
 * and that cluster, whose finalizer on it keeps what it stored until the restore no longer needs it.
 */
export interface SnapshotHoldParams {
  readonly snapshot: string;
  readonly cluster: string;
}

/** Parameters of createSnapshotJob: the snapshot, and the EtcdMember it is taken from. */
export interface CreateSnapshotJobParams {
  readonly snapshot: string;
  readonly member: string;
}

/** Parameters of createRestoreJob: the cluster whose bootstrap.restore snapshot is checked. */
export interface RestoreParams {
  readonly cluster: string;
}

/** Parameters of an intent about one EtcdSnapshot of an EtcdSnapshotSchedule. */
export interface ScheduledSnapshotParams {
  /** The EtcdSnapshotSchedule's name and uid: only snapshots labelled with this uid are its own. */
  readonly schedule: string;
  readonly scheduleUid: string;
  /** The EtcdSnapshot's name. */
  readonly name: string;
}

/**
 * Parameters of createScheduledSnapshot: the name is a function of the fire time, so a run asked
 * for again (a retry, a crash before the outcome) finds the snapshot it made instead of making two.
 */
export interface CreateScheduledSnapshotParams extends ScheduledSnapshotParams {
  /** The fire time this run is for, RFC 3339. */
  readonly scheduledAt: string;
  /** The snapshot is verified by a restore (an Nth run of spec.verify.every); absent in older journals. */
  readonly verify?: boolean;
}

/** Parameters of deleteEtcdSnapshot: the snapshot, and the retention limit that drops it. */
export interface DeleteEtcdSnapshotParams extends ScheduledSnapshotParams {
  readonly reason: 'keepLast' | 'maxAge' | 'failedHistoryLimit';
}

/** Every intent kind, with its parameters. */
export interface IntentParams {
  readonly ensureServices: EnsureServicesParams;
  readonly ensureCertificates: EnsureCertificatesParams;
  readonly checkCertificates: CheckCertificatesParams;
  readonly enableAuth: EnableAuthParams;
  readonly createMember: CreateMemberParams;
  readonly addLearner: AddLearnerParams;
  readonly promoteLearner: PromoteLearnerParams;
  readonly deleteMember: MemberParams;
  readonly removeEtcdMember: RemoveEtcdMemberParams;
  readonly setDormant: SetDormantParams;
  readonly setMemberVersion: SetMemberVersionParams;
  readonly setForceNewCluster: SetForceNewClusterParams;
  readonly resolveRecoverySnapshot: ResolveRecoverySnapshotParams;
  readonly holdSnapshot: SnapshotHoldParams;
  readonly releaseSnapshotHold: SnapshotHoldParams;
  readonly readRevision: ReadRevisionParams;
  readonly growVolume: GrowVolumeParams;
  readonly moveLeader: MoveLeaderParams;
  readonly flushRaftLog: FlushRaftLogParams;
  readonly enableDowngrade: DowngradeParams;
  readonly cancelDowngrade: DowngradeParams;
  readonly defragment: DefragmentParams;
  readonly compact: CompactParams;
  readonly disarmAlarm: DisarmAlarmParams;
  readonly createUpgradeSnapshot: CreateUpgradeSnapshotParams;
  readonly createRestoreJob: RestoreParams;
  readonly setDisruptionBudget: DisruptionBudgetParams;
  readonly createPVC: MemberParams;
  readonly createPod: MemberParams;
  readonly deletePod: MemberParams;
  readonly forceDeletePod: ForceDeletePodParams;
  readonly releaseFinalizer: MemberParams;
  readonly addSnapshotFinalizer: SnapshotParams;
  readonly createSnapshotJob: CreateSnapshotJobParams;
  readonly deleteSnapshotJob: SnapshotParams;
  readonly createSnapshotDeleteJob: SnapshotParams;
  readonly createVerifyJob: SnapshotParams;
  readonly releaseSnapshotFinalizer: SnapshotParams;
  readonly createScheduledSnapshot: CreateScheduledSnapshotParams;
  readonly deleteEtcdSnapshot: DeleteEtcdSnapshotParams;
}

/** The name of an intent kind. */
export type IntentKind = keyof IntentParams;

/** An intent as a machine asks for it: its kind and its parameters. */
export type Intent<K extends IntentKind = IntentKind> = {
  [P in K]: { readonly type: P; readonly params: IntentParams[P] };
}[K];

/** The intents the cluster machine asks for. */
export const CLUSTER_INTENTS = [
  'ensureServices',
  'ensureCertificates',
  'checkCertificates',
  'enableAuth',
  'createMember',
  'addLearner',
  'promoteLearner',
  'deleteMember',
  'removeEtcdMember',
  'setDormant',
  'setMemberVersion',
  'setForceNewCluster',
  'resolveRecoverySnapshot',
  'holdSnapshot',
  'releaseSnapshotHold',
  'readRevision',
  'growVolume',
  'moveLeader',
  'flushRaftLog',
  'enableDowngrade',
  'cancelDowngrade',
  'defragment',
  'compact',
  'disarmAlarm',
  'createUpgradeSnapshot',
  'createRestoreJob',
  'setDisruptionBudget',
] as const satisfies readonly IntentKind[];

/** The intents the member machine asks for. */
export const MEMBER_INTENTS = [
  'createPVC',
  'createPod',
  'deletePod',
  'forceDeletePod',
  'removeEtcdMember',
  'releaseFinalizer',
] as const satisfies readonly IntentKind[];

/** The intents the snapshot machine asks for. */
export const SNAPSHOT_INTENTS = [
  'addSnapshotFinalizer',
  'createSnapshotJob',
  'deleteSnapshotJob',
  'createSnapshotDeleteJob',
  'createVerifyJob',
  'releaseSnapshotFinalizer',
  'releaseSnapshotHold',
] as const satisfies readonly IntentKind[];

/** The intents the schedule machine asks for. */
export const SCHEDULE_INTENTS = [
  'createScheduledSnapshot',
  'deleteEtcdSnapshot',
] as const satisfies readonly IntentKind[];

/** Intents of the cluster machine. */
export type ClusterIntent = Intent<(typeof CLUSTER_INTENTS)[number]>;
/** Intents of the member machine. */
export type MemberIntent = Intent<(typeof MEMBER_INTENTS)[number]>;
/** Intents of the snapshot machine. */
export type SnapshotIntent = Intent<(typeof SNAPSHOT_INTENTS)[number]>;
/** Intents of the schedule machine. */
export type ScheduleIntent = Intent<(typeof SCHEDULE_INTENTS)[number]>;
