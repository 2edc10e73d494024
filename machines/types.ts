/**
 * The vocabulary of the machines: what they observe and the events that bring it (the
 * intents they ask for are in intents.ts). Plain data only: every value here is journaled
 * as JSON.
 *
 * Time is data too: the runtime stamps each event with `at` (milliseconds since the epoch)
 * and the machines never read a clock.
 */

import type { ClusterIntent, MemberIntent, ScheduleIntent, SnapshotIntent } from './intents.ts';
import type { ClaimObservation, VolumeSize } from './cluster/volumes/rules.ts';
import type { OwnedSnapshot } from './schedule/index.ts';
import type { MemberState } from './member-state.ts';

export type { ClaimObservation, VolumeSize } from './cluster/volumes/rules.ts';

export type * from './intents.ts';

/** Which object a machine belongs to. */
export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * An EtcdCluster as its machines know it: the object, and whether its members talk to each other
 * over TLS (spec.tls.peer, fixed at creation), which makes their peer URLs https.
 */
export interface ClusterObjectRef extends ObjectRef {
  /** Absent: http (every cluster made before spec.tls existed). */
  readonly peerTLS?: boolean;
}

/** The part of EtcdCluster.spec the cluster machine acts on. */
export interface ClusterTarget {
  readonly replicas: number;
  readonly version: string;
  /**
   * The CA certificates members are to trust, as a digest of the ca.crt of the client and peer
   * Secrets (effects/kubernetes/trust.ts). Absent: no TLS, or the Secrets not read yet (then the
   * last known digest stays). etcd reads its CA files once, at start: a new digest rolls the members.
   */
  readonly trust?: string;
}

/** An EtcdMember as the cluster machine sees it (object plus its member machine's state). */
export interface MemberObservation {
  readonly name: string;
  readonly ordinal: number;
  readonly bootstrap: boolean;
  readonly dormant: boolean;
  /** Its EtcdMember.status.state, as the member machine wrote it. */
  readonly state: MemberState;
  /** metadata.deletionTimestamp is set. */
  readonly deleting: boolean;
  /** Why the member machine stopped trying, when its state is 'failed'. */
  readonly failure?: string;
  /** What keeps its Pod or claim from running (its Stuck condition), and since when (ms); absent: nothing. */
  readonly trouble?: Trouble & { readonly since: number };
  /** EtcdMember.spec.version: the etcd version its Pod is built with (absent in older journals). */
  readonly version?: string;
  /** EtcdMember.spec.trust: the CA digest its Pod is to start with (absent without TLS). */
  readonly trust?: string;
  /** The CA digest its Pod started with (the Pod's trust annotation); absent without a Pod. */
  readonly podTrust?: string;
  /** EtcdMember.spec.forceNewCluster: a recovery's requestID while its Pod is to start with --force-new-cluster. */
  readonly forceNewCluster?: string;
  /** Its Pod, when it has one: the requestID it started with --force-new-cluster for ('' for a plain start). */
  readonly pod?: { readonly forceNewCluster: string };
}

/** spec.maintenance.defrag as the cluster machine reads it; bytes as numbers. */
export interface DefragSpec {
  readonly schedule: string | null;
  /** Null for UTC. */
  readonly timeZone: string | null;
  readonly fragmentedBytes: number | null;
  readonly fragmentedPercent: number | null;
}

/** The part of EtcdCluster.spec maintenance acts on. */
export interface MaintenanceSpec {
  readonly defrag: DefragSpec | null;
  /** spec.options.quotaBackendBytes in bytes; null when etcd's default applies. */
  readonly quotaBytes: number | null;
}

/** One member as etcd's member list reports it. */
export interface EtcdMemberInfo {
  /** Hexadecimal member ID. */
  readonly id: string;
  /** Empty until the member has started (etcd learns the name from the member itself). */
  readonly name: string;
  readonly peerURL: string;
  readonly learner: boolean;
  /**
   * etcd holds the member's client URLs, which only the member itself publishes once it has
   * started: etcd ran on its data (absent in observations journaled before this was read).
   */
  readonly started?: boolean;
}

/** What etcd said when asked for its member list. */
export interface EtcdObservation {
  readonly clusterID: string;
  readonly members: readonly EtcdMemberInfo[];
  /** Members that answered a status call, by ID. */
  readonly healthy: readonly string[];
  /** The leader's ID, as most members that answered name it; null when none does. */
  readonly leader?: string | null;
  /**
   * While learners exist: each started learner's raft applied index next to the leader's
   * committed index, by learner ID (absent otherwise, so a probe at rest stays the same).
   */
  readonly learners?: Readonly<Record<string, { readonly applied: number; readonly leader: number }>>;
  /** The etcd version each member that answered its status call runs, by ID. */
  readonly versions?: Readonly<Record<string, string>>;
  /**
   * Healthy voters whose applied index trails the leader's committed index by more than
   * LAG_LIMIT entries, by ID (absent when none does): a member still catching up after a restart.
   */
  readonly behind?: readonly string[];
  /**
   * Each answering member's database by ID: bytes allocated (dbSize) and bytes holding data
   * (dbSizeInUse); the rest is fragmentation, which defragmenting gives back. Raw: the cluster
   * machine keeps only what its spec asks about (cluster-maintenance.ts), so it stays still at rest.
   */
  readonly sizes?: Readonly<Record<string, { readonly dbSize: number; readonly dbSizeInUse: number }>>;
  /** etcd's raised alarms (`NOSPACE`, `CORRUPT`) and the member that raised each; absent when none. */
  readonly alarms?: readonly { readonly memberID: string; readonly alarm: string }[];
  /**
   * While quorum is lost (no member names a leader, or fewer voters answer than a quorum): how far
   * each answering member has applied the raft log, and the revision of its data, by ID. What a
   * recovery picks its survivor by; absent otherwise, so a probe at rest stays the same.
   */
  readonly progress?: Readonly<Record<string, { readonly applied: number; readonly revision: number }>>;
}

/** spec.recovery as the cluster machine reads it: a recovery from a lost quorum, asked once per requestID. */
export interface RecoveryRequest {
  readonly requestID: string;
  readonly from: 'survivor' | 'snapshot';
  /** from survivor: the survivor the user expects; absent: the operator picks the most advanced. */
  readonly member?: string;
  /** from snapshot: the EtcdSnapshot to restore; absent: the newest good one of this cluster. */
  readonly snapshotName?: string;
  /** from snapshot: a snapshot of another EtcdCluster may be restored. */
  readonly allowOtherCluster?: boolean;
  /** from snapshot: a cluster whose quorum answers is rolled back to snapshotName. */
  readonly rollback?: boolean;
}

/** A retryable failure reported by an effect handler. */
export interface EffectFailure {
  readonly code: string;
  readonly message: string;
  /** False when trying again cannot help (the request is invalid); absent means it may. */
  readonly retryable?: boolean;
}

/** Cluster machine events. */
export type ClusterEvent =
  | {
      readonly type: 'k8s.cluster.updated';
      readonly at: number;
      readonly spec: ClusterTarget;
      readonly progressDeadlineSeconds: number;
      /** spec.bootstrap.restore is set: the cluster starts from a snapshot, checked first. */
      readonly restore?: boolean;
      /** spec.bootstrap.restore.snapshotName: the EtcdSnapshot it starts from, held until its seed runs. */
      readonly restoreSnapshot?: string;
      /** spec.upgrade.snapshot is set: a roll to a new version takes a snapshot first. */
      readonly upgradeSnapshot?: boolean;
      /** spec.options.snapshotCount, when set (etcd's --snapshot-count; 10,000 otherwise). */
      readonly snapshotCount?: number;
      /** spec.maintenance and the backend quota (absent in older journals: none, etcd's default). */
      readonly maintenance?: MaintenanceSpec;
      /** spec.storage.size; null for storage.medium Memory (absent in older journals). */
      readonly volumeSize?: VolumeSize | null;
      /** spec.tls names an issuer: the seeding step makes cert-manager Certificates first. */
      readonly certificates?: boolean;
      /** spec.auth.enabled: etcd authentication is turned on once a quorum answers. */
      readonly auth?: boolean;
      /** spec.recovery: a recovery from a lost quorum asked for (absent: none). */
      readonly recovery?: RecoveryRequest;
      /** status.recovery.requestID: the last request handled, as the status says (absent: none). */
      readonly recoveryHandled?: string;
    }
  | { readonly type: 'k8s.cluster.deleted'; readonly at: number }
  | { readonly type: 'k8s.members.listed'; readonly at: number; readonly members: readonly MemberObservation[] }
  | { readonly type: 'etcd.members.listed'; readonly at: number; readonly etcd: EtcdObservation }
  | { readonly type: 'etcd.unreachable'; readonly at: number; readonly error: string }
  | { readonly type: 'k8s.restoreJob.observed'; readonly at: number; readonly job: JobObservation | null }
  | {
      readonly type: 'k8s.upgradeSnapshots.listed';
      readonly at: number;
      readonly snapshots: readonly PreUpgradeSnapshot[];
    }
  | { readonly type: 'k8s.claims.listed'; readonly at: number; readonly claims: readonly ClaimObservation[] }
  | { readonly type: 'timer.tick'; readonly at: number }
  | EffectOutcome<ClusterIntent['type']>;

/** An EtcdSnapshot a roll took (or takes) before it began: the version it rolls to, and how it went. */
export interface PreUpgradeSnapshot {
  readonly name: string;
  readonly version: string;
  /** status.phase; empty before the snapshot machine wrote one. */
  readonly phase: string;
  /** What its Progressing condition says, when it failed. */
  readonly message?: string;
}

/** The outcome of an intent, fed back to the machine that asked for it. */
export type EffectOutcome<K extends string> =
  | { readonly type: `effect.${K}.succeeded`; readonly at: number; readonly result?: Readonly<Record<string, unknown>> }
  | { readonly type: `effect.${K}.failed`; readonly at: number; readonly error: EffectFailure };

/** A Pod as the member machine sees it. */
/** What keeps a member's Pod or claim from running, in Kubernetes' words: its reason and message. */
export interface Trouble {
  /** Kubernetes' reason: Unschedulable, ErrImagePull, ImagePullBackOff, CrashLoopBackOff, ClaimPending... */
  readonly reason: string;
  readonly message: string;
}

export interface PodObservation {
  readonly uid: string;
  readonly phase: string;
  readonly ready: boolean;
  readonly deleting: boolean;
  /** How often the kubelet restarted the etcd container in this Pod (its init containers do not run again). */
  readonly restarts?: number;
  /** The etcd version of its etcd container's image (absent when the image names none). */
  readonly version?: string;
  /** The CA digest it started with, from its trust annotation (absent without TLS). */
  readonly trust?: string;
  /** The recovery requestID it started etcd with --force-new-cluster for, from its annotation (absent: a plain start). */
  readonly forceNewCluster?: string;
  /**
   * The node it is bound to, when Kubernetes evicts it from there because the node is down: the
   * node lifecycle controller tainted the node NotReady or unreachable, and the Pod's toleration
   * of that (300 s unless its spec says otherwise) ran out. Absent otherwise.
   */
  readonly evictedFromNode?: string;
  /** What keeps it from running (not scheduled, an image it cannot pull, a crash loop); absent: nothing. */
  readonly trouble?: Trouble;
}

/** Member machine events. */
export type MemberEvent =
  | {
      readonly type: 'k8s.member.updated';
      readonly at: number;
      readonly dormant: boolean;
      readonly deleting: boolean;
      /** The owning EtcdCluster is being deleted (or gone): no etcd removal, just let go. */
      readonly clusterDeleting: boolean;
      /** metadata.generation of the EtcdMember and of its EtcdCluster: what its Pod is built from. */
      readonly generation: number;
      readonly clusterGeneration: number;
      /** spec.version: the etcd version the member's Pod is to run. */
      readonly version?: string;
      /** spec.trust: the CA digest the member's Pod is to start with. */
      readonly trust?: string;
      /** spec.forceNewCluster: the recovery's requestID while its Pod is to start with --force-new-cluster. */
      readonly forceNewCluster?: string;
      /** A bootstrap member whose initial cluster names it alone (a recovery's seed): it forms a cluster of its own. */
      readonly alone?: boolean;
    }
  | { readonly type: 'k8s.pod.observed'; readonly at: number; readonly pod: PodObservation | null }
  | {
      readonly type: 'k8s.pvc.observed';
      readonly at: number;
      readonly bound: boolean | null;
      /** Why it is not bound yet (Pending); absent: nothing to say. */
      readonly trouble?: Trouble;
      /**
       * The node the claim is tied to, when no such node exists any more: its volume's (the
       * PersistentVolume's node affinity) or, while Pending, the node selected for its volume
       * (`volume.kubernetes.io/selected-node`). No Pod of the member can run meanwhile. Absent: a
       * live node, none, or not known.
       */
      readonly lostNode?: string;
    }
  | { readonly type: 'etcd.member.observed'; readonly at: number; readonly member: EtcdMemberInfo | null }
  | { readonly type: 'member.data.lost'; readonly at: number; readonly reason: string }
  | { readonly type: 'timer.tick'; readonly at: number }
  | EffectOutcome<MemberIntent['type']>;

/** The EtcdCluster a snapshot is taken of, as the snapshot machine sees it. */
export interface SnapshotClusterObservation {
  readonly exists: boolean;
  readonly deleting: boolean;
  /** spec.replicas is 0: no member runs to take a snapshot from. */
  readonly dormant: boolean;
  /**
   * Members a snapshot may be taken from: healthy voters of a cluster with a leader, followers
   * first. Empty when quorum is lost; null when the cluster was not probed yet.
   */
  readonly candidates: readonly string[] | null;
}

/** What a snapshot agent reported: what it stored, read back and checked. */
export interface SnapshotReport {
  readonly location: string;
  readonly size: number;
  readonly sha256: string;
  readonly revision: number;
  readonly etcdVersion: string;
  /** etcd's HashKV of the member at `revision`, and the compaction it began from (-1: none). */
  readonly hashKV?: number;
  readonly compactRevision?: number;
  /** Keys on the member at `revision`. */
  readonly keys?: number;
  /** S3: unfinished uploads that earlier, interrupted runs left and the agent aborted. */
  readonly abortedUploads?: number;
  /** S3: why the agent could not abort them (the snapshot is stored and checked all the same). */
  readonly uploadsNotAborted?: string;
}

/** What a verify Job's agent found: a restore of the stored snapshot, against what was recorded. */
export interface SnapshotVerdict {
  readonly verified: boolean;
  /** What was checked, as users read it. */
  readonly checked: string;
  /** What differed, a sentence each; empty when verified. */
  readonly differences: readonly string[];
}

/** A Job of the snapshot machine (taking the snapshot, verifying it, or deleting what it stored). */
export interface JobObservation {
  readonly uid: string;
  readonly active: boolean;
  /** The Job completed; the agent's report, when its Pod's termination message holds one. */
  readonly succeeded: boolean;
  readonly report?: SnapshotReport | null;
  /** A verify Job completed: its agent's verdict. */
  readonly verdict?: SnapshotVerdict | null;
  /** The Job failed for good (its back-off limit or deadline): why, from its last Pod if it said. */
  readonly failed: string | null;
  readonly deleting: boolean;
}

/** Snapshot machine events. */
export type SnapshotEvent =
  | {
      readonly type: 'k8s.snapshot.updated';
      readonly at: number;
      readonly deleting: boolean;
      readonly retain: boolean;
      readonly finalizer: boolean;
      /** spec.verify; absent in events journaled before it existed. */
      readonly verify?: boolean;
      /** The EtcdClusters that hold it (their restoring finalizer) and exist, not being deleted. */
      readonly heldBy?: readonly string[];
      /** The EtcdClusters whose hold is on it though they are gone or being deleted: nothing restores for them. */
      readonly staleHolds?: readonly string[];
    }
  | { readonly type: 'k8s.cluster.observed'; readonly at: number; readonly cluster: SnapshotClusterObservation }
  | { readonly type: 'k8s.job.observed'; readonly at: number; readonly job: JobObservation | null }
  | { readonly type: 'k8s.deleteJob.observed'; readonly at: number; readonly job: JobObservation | null }
  | { readonly type: 'k8s.verifyJob.observed'; readonly at: number; readonly job: JobObservation | null }
  | { readonly type: 'timer.tick'; readonly at: number }
  | EffectOutcome<SnapshotIntent['type']>;

/** The part of an EtcdSnapshotSchedule the schedule machine acts on, as written (checked by the machine). */
export interface ScheduleSpecObservation {
  /** metadata.generation: a failure rests until the spec is edited. */
  readonly generation: number;
  readonly schedule: string;
  /** Null for UTC. */
  readonly timeZone: string | null;
  readonly suspend: boolean;
  readonly startingDeadlineSeconds: number | null;
  readonly keepLast: number | null;
  readonly maxAge: string | null;
  readonly failedHistoryLimit: number;
  /** metadata.creationTimestamp (epoch ms): fire times at or before it never run. */
  readonly createdAt: number;
  /** spec.verify.every: verify the snapshot of every Nth run; null (or absent, in older journals) for none. */
  readonly verifyEvery?: number | null;
}

/** Schedule machine events. The snapshots are the schedule's own that are not being deleted. */
export type ScheduleEvent =
  | {
      readonly type: 'k8s.schedule.updated';
      readonly at: number;
      readonly spec: ScheduleSpecObservation;
      readonly deleting: boolean;
    }
  | { readonly type: 'k8s.snapshots.listed'; readonly at: number; readonly snapshots: readonly OwnedSnapshot[] }
  | { readonly type: 'timer.tick'; readonly at: number }
  | EffectOutcome<ScheduleIntent['type']>;
