/**
 * What the manager knows of each kind of object it runs a machine for, as one entry of one
 * table (kinds/index.ts): the collection it watches, how a runner is made for an object, how
 * its status is built and written and its Events told, and how a work-queue key of it is
 * worked. The controller and ObjectRunners read the table and name no kind; a new kind is a
 * line in KindTypes, an entry in KINDS and its own files.
 */
import type { ContextFrom } from 'xstate';
import type {
  EtcdCluster,
  EtcdClusterStatus,
  EtcdMember,
  EtcdMemberStatus,
  EtcdSnapshot,
  EtcdSnapshotSchedule,
  EtcdSnapshotScheduleStatus,
  EtcdSnapshotStatus,
  ObservedMachine,
} from '../../api/v1alpha1/index.ts';
import type { EtcdContext } from '../../effects/etcd/index.ts';
import type { EventInput, KubeContext } from '../../effects/kubernetes/index.ts';
import type { ClusterRef, EffectContext } from '../../effects/types.ts';
import type { MachineName, ObjectKind, ObjectRef } from '../../journal/index.ts';
import type { Described } from '../../machines/index.ts';
import type { clusterMachine } from '../../machines/cluster.ts';
import type { memberMachine } from '../../machines/member.ts';
import type { snapshotMachine } from '../../machines/snapshot.ts';
import type { snapshotScheduleMachine } from '../../machines/snapshot-schedule.ts';
import type { ClusterTrust } from '../cluster-trust.ts';
import type { EtcdProbes } from '../etcd-probes.ts';
import type { Informer } from '../informer.ts';
import type { OperatorCertificates } from '../operator-certificates.ts';
import type { ProbeSchedule } from '../probe-schedule.ts';
import type { WorkQueue } from '../queue.ts';
import type { Runner } from '../runner.ts';
import type { Owned, WatchSpec } from '../watches.ts';
import type { VolumeNodes } from '../volume-nodes.ts';
import type { ClaimWarnings } from '../claim-warnings.ts';

/** The object, status and machine of each kind. */
export interface KindTypes {
  readonly EtcdCluster: { object: EtcdCluster; status: EtcdClusterStatus; machine: typeof clusterMachine };
  readonly EtcdMember: { object: EtcdMember; status: EtcdMemberStatus; machine: typeof memberMachine };
  readonly EtcdSnapshot: { object: EtcdSnapshot; status: EtcdSnapshotStatus; machine: typeof snapshotMachine };
  readonly EtcdSnapshotSchedule: {
    object: EtcdSnapshotSchedule;
    status: EtcdSnapshotScheduleStatus;
    machine: typeof snapshotScheduleMachine;
  };
}

/** A kind the manager runs machines for (the journal's ObjectKind, checked below). */
export type KindName = keyof KindTypes;
/** The object of kind K. */
export type ObjectOf<K extends KindName> = KindTypes[K]['object'];
/** The status of kind K. */
export type StatusOf<K extends KindName> = KindTypes[K]['status'];
/** The machine of kind K. */
export type MachineOf<K extends KindName> = KindTypes[K]['machine'];
/** The context of kind K's machine. */
export type ContextOf<K extends KindName> = ContextFrom<MachineOf<K>>;

// The journal and the manager name the same kinds: a kind missing from either fails here.
true satisfies KindName extends ObjectKind ? (ObjectKind extends KindName ? true : false) : false;

/** The manager's effect context: the Kubernetes and etcd clients. */
export type ManagerContext = KubeContext & EtcdContext;

/** What a new runner is made with. */
export interface Identity {
  /** The object as the journal keys it. */
  readonly ref: ObjectRef;
  /** The EtcdCluster its handlers act for (uid '' when they never act on the cluster itself). */
  readonly cluster: ClusterRef;
  /** A new machine's input: fixed at creation, for the machine's life. */
  readonly input: unknown;
}

/** One step (or a refresh) of a kind's machine, as its status is built from it. */
export interface KindStep<K extends KindName> {
  readonly seq: number;
  /** The dotted state paths before and after (the same for a refresh). */
  readonly from: string;
  readonly to: string;
  readonly context: ContextOf<K>;
  readonly generation: number;
}

/** Everything the manager needs to know of one kind. */
export interface KindSpec<K extends KindName> {
  readonly kind: K;
  /** The machine's name in the journal, logs and metrics. */
  readonly machineName: MachineName;
  readonly machine: MachineOf<K>;
  /** Its own collection. */
  readonly watch: WatchSpec<ObjectOf<K>>;
  /** Informers start in waves, lowest first, the owned collections in wave 0: a kind's first work sees what it reads. */
  readonly wave: number;
  /** The ref, cluster and input of its runner; `owner` is its EtcdCluster when it has one and it is seen. */
  identify(object: ObjectOf<K>, owner: EtcdCluster | undefined): Identity;
  /** The status after a step, from the status the object has now (the manager adds status.observed). */
  status(current: StatusOf<K> | undefined, step: KindStep<K>, now: number): StatusOf<K>;
  /** Writes the fields of `status` that differ from `current` on the object named `name`. */
  patch(ctx: KubeContext, name: string, status: StatusOf<K>, current: StatusOf<K> | undefined): Promise<unknown>;
  /** The step and message of a state, for the Event of a transition. */
  describe(path: string, context: ContextOf<K>): Described;
  /** A Warning to record once a written status shows something newly wrong; undefined for none. */
  warning?(before: StatusOf<K> | undefined, after: StatusOf<K>): Omit<EventInput, 'regarding'> | undefined;
  /**
   * Works a key whose object the cache has: makes or resumes its runner (`work.runners.entry`),
   * feeds it what is observed now (`work.step`) and wakes the key later when the machine waits for time.
   */
  work(key: string, object: ObjectOf<K>, work: KindWork): Promise<void>;
  /** Forgets what the manager keeps about an object that went. */
  forget?(uid: string, work: KindWork): void;
}

/** A running machine and what the manager keeps beside it. */
export interface Entry<C extends EffectContext, K extends KindName = KindName> {
  readonly kind: K;
  readonly spec: KindSpec<K>;
  readonly key: string;
  readonly ref: ObjectRef;
  /** The EtcdCluster the object belongs to (itself, for a cluster). */
  readonly cluster: ClusterRef;
  readonly runner: Runner<C, MachineOf<K>>;
  /** The journal the runner was made on (JournalKeeper.generation). */
  readonly generation: number;
  /** The journal failed under the runner: it may be ahead of the journal, and is made again from it. */
  journalFailed: boolean;
  /** Sequence number of the last journaled step. */
  seq: number;
  /** The last journaled step's share of status.observed (sequence and state); undefined until one is published. */
  observed: ObservedMachine | undefined;
  /** The resume annotation this manager last wrote (null: removed); undefined until it wrote one. */
  resume: string | null | undefined;
  resumed: boolean;
  /** The object as last seen by the informer. */
  object: ObjectOf<K>;
  /** The status this manager last wrote: newer than the informer's copy until the watch catches up. */
  written: StatusOf<K> | undefined;
}

/** An entry of any kind, told apart by `kind`. */
export type AnyEntry<C extends EffectContext> = { [K in KindName]: Entry<C, K> }[KindName];

/** The informer caches: one per kind, and one per owned collection. */
export type Caches = { readonly [K in KindName]: Informer<ObjectOf<K>> } & {
  readonly [N in keyof Owned]: Informer<Owned[N]>;
};

/** What working a key of any kind reads and acts on. */
export interface KindWork {
  readonly caches: Caches;
  readonly queue: Pick<WorkQueue, 'add' | 'addAfter'>;
  readonly now: () => number;
  /** The last etcd probe of each cluster, and the probe itself. */
  readonly probes: EtcdProbes;
  readonly certs: OperatorCertificates;
  readonly trust: ClusterTrust;
  /** Whether a member's volume is pinned to a node that is gone. */
  readonly volumeNodes: VolumeNodes;
  /** The newest Warning Event on a member's Pending claim. */
  readonly claimWarnings: ClaimWarnings;
  /** When each cluster at rest is looked at again. */
  readonly rest: ProbeSchedule;
  /** The runner of an object, made or resumed on first use; `owner` is its EtcdCluster when seen. */
  entry<K extends KindName>(
    spec: KindSpec<K>,
    key: string,
    object: ObjectOf<K>,
    owner?: EtcdCluster,
  ): Promise<Entry<ManagerContext, K>>;
  /**
   * One look at an entry: a back-off that ran out is fed first (as a tick), then `observe` feeds
   * what is seen now; the status is written again where it differs, and a back-off in the
   * machine's context becomes a timer on the key. True when a step was journaled.
   */
  step<K extends KindName>(entry: Entry<ManagerContext, K>, observe: () => Promise<void>): Promise<boolean>;
  membersOf(namespace: string, cluster: string): EtcdMember[];
  snapshotsOf(namespace: string, cluster: string): EtcdSnapshot[];
}
