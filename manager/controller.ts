/**
 * The control loop: informers on the objects of each kind (the table in kinds/) and on what the
 * operator makes for them (Pods, claims, Jobs) feed a keyed work queue; working a key hands the
 * object to its kind's entry, which feeds everything observed about it (and, for a cluster, a
 * fresh etcd probe) to the object's Runner, which journals each step and runs its intents. A key whose machine moved is worked again at once, so the loop goes on until
 * nothing changes: the happy path waits only for the world, never for a timer. Timers exist
 * for back-off retries, progress deadlines and the health probe of a cluster at rest, which
 * backs off while the cluster stays the same (probe-schedule.ts).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { AnyMachineSnapshot } from 'xstate';
import type { EtcdMember, EtcdSnapshot } from '../api/v1alpha1/index.ts';
import { EtcdClients, etcdHandlers } from '../effects/etcd/index.ts';
import { holdersOf } from '../effects/kubernetes/meta.ts';
import {
  getSecret,
  kubeClients,
  kubernetesHandlers,
  type KubeClients,
  type PodSettings,
} from '../effects/kubernetes/index.ts';
import type { ClusterRef, HandlerTable } from '../effects/types.ts';
import type { StepBookkeeping } from '../machines/index.ts';
import { ClusterTrust } from './cluster-trust.ts';
import { VolumeNodes, volumeNodeReader } from './volume-nodes.ts';
import { ClaimWarnings, claimWarningReader } from './claim-warnings.ts';
import { EtcdProbes } from './etcd-probes.ts';
import { Informer, type KubeObject } from './informer.ts';
import type { JournalKeeper } from './journal-keeper.ts';
import {
  isKindName,
  KINDS,
  type Caches,
  type Entry,
  type KindName,
  type KindWork,
  type ManagerContext,
} from './kinds/index.ts';
import type { ManagerMetrics } from './metrics.ts';
import { ObjectRunners } from './object-runners.ts';
import { OperatorCertificates } from './operator-certificates.ts';
import { ProbeSchedule } from './probe-schedule.ts';
import { WorkQueue } from './queue.ts';
import { etcdResolver, type EtcdAddressMode } from './resolver.ts';
import { collectionPath, listCollection, OWNED, type WatchSpec } from './watches.ts';

export type { ManagerContext } from './kinds/index.ts';

/** Options of Controller. */
export interface ControllerOptions {
  readonly kubeConfig: KubeConfig;
  /** The journal, replaced by a new one when it is found damaged. */
  readonly journal: JournalKeeper;
  readonly log: Logger;
  readonly metrics: ManagerMetrics;
  /** Watch one namespace; all when undefined. */
  readonly namespace?: string;
  readonly etcdAddress: EtcdAddressMode;
  /** Image of the check-data init container in etcd Pods. */
  readonly agentImage?: string;
  /** The etcd image repository, pull Secrets and default resources of the Pods it makes. */
  readonly pods?: PodSettings;
  /** This manager's name (its Pod), reported on Events. */
  readonly identity: string;
  /** Deadline of one effect call (default 30 s). */
  readonly effectTimeoutMs?: number;
  /** How soon a cluster at rest is probed again after a change (default 15 s). */
  readonly resyncMs?: number;
  /** The longest wait between two probes of a steady cluster that stays the same (default 120 s). */
  readonly maxResyncMs?: number;
  /** How long a usable read of a cluster's TLS Secrets stands (default a minute). */
  readonly secretReadMs?: number;
  readonly concurrency?: number;
  readonly now?: () => number;
}

const HANDLERS = { ...kubernetesHandlers, ...etcdHandlers } satisfies HandlerTable<ManagerContext>;

/** Runs the machine of every object of each kind (kinds/index.ts) it can see. */
export class Controller {
  readonly #o: ControllerOptions;
  readonly #kube: KubeClients;
  readonly #etcd: EtcdClients;
  readonly #queue: WorkQueue;
  /** One informer per kind and per owned collection. */
  readonly #caches: Caches;
  readonly #runners: ObjectRunners<ManagerContext>;
  /** What working a key of any kind reads and acts on. */
  readonly #work: KindWork;
  readonly #now: () => number;

  constructor(options: ControllerOptions) {
    this.#o = options;
    const now = (this.#now = options.now ?? Date.now);
    this.#kube = kubeClients(options.kubeConfig);
    const readSecret = (ns: string, name: string) =>
      getSecret(this.#kube, ns, name, AbortSignal.timeout(options.effectTimeoutMs ?? 30_000));
    const reads = { now, ...(options.secretReadMs ? { maxAgeMs: options.secretReadMs } : {}) };
    /** The operator's client certificate of each cluster with client TLS. */
    const certs = new OperatorCertificates(readSecret, reads);
    this.#etcd = new EtcdClients(
      etcdResolver(options.etcdAddress, {
        members: (ns, cluster) => this.#membersOf(ns, cluster),
        pod: (ns, name) => this.#caches.pods.get(ns, name),
        cluster: (ns, name) => this.#caches.EtcdCluster.get(ns, name),
        credentials: (uid) => certs.get(uid),
      }),
      { callTimeoutMs: 3000 },
    );
    this.#queue = new WorkQueue((key) => this.#workOn(key), {
      concurrency: options.concurrency ?? 4,
      onError: (key, err, attempt) => {
        options.metrics.errors.inc({ kind: key.split('/')[0] ?? '' });
        options.log.warn(
          { key, attempt, err: err instanceof Error ? err.message : String(err) },
          'reconcile failed; retrying with back-off',
        );
      },
    });
    // Shown as 0 from the start, so the rate of errors per kind reads 0, not "No data", until one fails.
    for (const kind of Object.keys(KINDS)) options.metrics.errors.inc({ kind }, 0);
    this.#runners = new ObjectRunners<ManagerContext>({
      journal: options.journal,
      log: options.log,
      metrics: options.metrics,
      kube: this.#kube,
      handlers: HANDLERS,
      context: (cluster) => this.#context(cluster),
      now,
    });
    // A new journal took the place of a damaged one: every object is worked again, and adopted.
    options.journal.onReplaced(() => {
      for (const key of this.#runners.keys()) this.#queue.add(key);
    });
    const routing = {
      membersOf: (ns: string, cluster: string) => this.#membersOf(ns, cluster),
      snapshotsOf: (ns: string, cluster: string) => this.#snapshotsOf(ns, cluster),
    };
    const informer = <T extends KubeObject>(w: WatchSpec<T>): Informer<T> =>
      new Informer<T>({
        name: w.resource,
        kubeConfig: options.kubeConfig,
        path: collectionPath(w.collection, options.namespace),
        labelSelector: w.selector,
        list: () => listCollection<T>(this.#kube, w.collection, options.namespace, w.selector),
        log: options.log,
        onList: () => options.metrics.relists.inc({ resource: w.resource }),
        onChange: (_, o) => {
          for (const key of w.route(o, routing)) this.#queue.add(key);
        },
      });
    // One informer per kind, from its entry's watch, and one per owned collection.
    const kinds = Object.values(KINDS).map((k) => [k.kind, informer(k.watch as WatchSpec<KubeObject>)]);
    const owned = Object.entries(OWNED).map(([n, w]) => [n, informer(w as WatchSpec<KubeObject>)]);
    this.#caches = Object.fromEntries([...kinds, ...owned]) as Caches;
    options.metrics.clusters.watch(this.#caches);
    this.#work = {
      caches: this.#caches,
      queue: this.#queue,
      now,
      probes: new EtcdProbes({
        etcd: this.#etcd,
        log: options.log,
        metrics: options.metrics,
        now,
        requeue: (key) => this.#queue.add(key),
        ...routing,
      }),
      certs,
      trust: new ClusterTrust(readSecret, reads),
      volumeNodes: new VolumeNodes(volumeNodeReader(this.#kube, 10_000), { now }),
      claimWarnings: new ClaimWarnings(claimWarningReader(this.#kube, 10_000), { now }),
      rest: new ProbeSchedule({ baseMs: options.resyncMs ?? 15_000, maxMs: options.maxResyncMs ?? 120_000 }),
      entry: (spec, key, object, owner) => this.#runners.entry(spec, key, object, owner),
      step: (entry, observe) => this.#step(entry, observe),
      membersOf: routing.membersOf,
      snapshotsOf: routing.snapshotsOf,
    };
    options.metrics.gauge('etcd_operator_queue_depth', 'Keys waiting or being worked on.', () => this.#queue.depth);
    options.metrics.gauge(
      'etcd_operator_machines',
      'Machines (EtcdClusters and EtcdMembers) the manager runs.',
      () => this.#runners.size,
    );
  }

  /** The uids of the objects whose machines run now (the debug page's index shows these). */
  runningUids(): Set<string> {
    return this.#runners.uids();
  }

  /** Whether every informer has listed once. */
  get synced(): boolean {
    return this.#informers().every((i) => i.synced);
  }

  #informers(): Informer<KubeObject>[] {
    return Object.values<Informer<KubeObject>>(this.#caches);
  }

  /**
   * Starts the informers; resolves once their caches are filled (work starts as they fill): in
   * the waves the kinds' entries name, the owned collections in the first, so a kind's first work
   * sees what it reads (a cluster its Pods, claims and members; a schedule its snapshots).
   */
  async start(): Promise<void> {
    const kinds = Object.values(KINDS);
    const owned = Object.keys(OWNED) as (keyof typeof OWNED)[];
    for (const wave of [...new Set([0, ...kinds.map((k) => k.wave)])].sort((a, b) => a - b))
      await Promise.all(
        [
          ...(wave === 0 ? owned.map((n) => this.#caches[n]) : []),
          ...kinds.filter((k) => k.wave === wave).map((k) => this.#caches[k.kind]),
        ].map((i) => i.start()),
      );
  }

  /** Stops watching and waits for the work in flight. */
  async stop(): Promise<void> {
    for (const i of this.#informers()) i.stop();
    await this.#queue.stop();
    this.#etcd.close();
  }

  /** Works a key; one that met a damaged or replaced journal is worked again at once, on the new one. */
  async #workOn(key: string): Promise<void> {
    if ((await this.#runners.withJournal(key, () => this.#workKey(key))) === 'again') this.#queue.add(key);
    else this.#o.metrics.reconciled(key, this.#now());
  }

  async #workKey(key: string): Promise<void> {
    const [kind = '', ns = '', name = ''] = key.split('/');
    if (!this.synced) return this.#queue.addAfter(key, 100);
    this.#o.log.debug({ key }, 'work');
    if (!isKindName(kind)) throw new Error(`work-queue key ${key} names no kind`);
    return this.#workObject(kind, key, ns, name);
  }

  /** Works a key of kind K through its entry; an object gone from the cache has its runner dropped. */
  async #workObject<K extends KindName>(kind: K, key: string, ns: string, name: string): Promise<void> {
    const spec = KINDS[kind];
    const object = this.#caches[kind].get(ns, name);
    if (object) return spec.work(key, object, this.#work);
    const uid = this.#runners.drop(key);
    this.#o.metrics.forget(key);
    if (uid) spec.forget?.(uid, this.#work);
  }

  /** KindWork.step: a back-off due fed first, then what is observed, the status, the timers. */
  async #step<K extends KindName>(entry: Entry<ManagerContext, K>, observe: () => Promise<void>): Promise<boolean> {
    const before = entry.seq;
    // A back-off that has run out is fed first, as the tick it is, so the journal says why the retry happened.
    const { retryAt } = bookkeeping(entry);
    const at = this.#now();
    if (retryAt !== null && at >= retryAt) await entry.runner.feed({ type: 'timer.tick', at });
    await observe();
    await this.#runners.refresh(entry);
    this.#timers(entry.key, bookkeeping(entry));
    return entry.seq !== before;
  }

  /** A retry back-off in the machine's context is a timer here. */
  #timers(key: string, context: Pick<StepBookkeeping, 'retryAt'>): void {
    // A back-off already due was fed as a tick at the start of this work: one the machine did not
    // take is looked at again in a second, never at once (that would spin).
    if (context.retryAt === null) return;
    const wait = context.retryAt - this.#now();
    this.#queue.addAfter(key, wait < 0 ? 1000 : wait + 1);
  }

  /** The cluster's EtcdSnapshots, and those it holds (restores from): a change to it concerns each. */
  #snapshotsOf(namespace: string, cluster: string): EtcdSnapshot[] {
    return this.#caches.EtcdSnapshot.list().filter(
      (s) =>
        s.metadata.namespace === namespace &&
        (s.spec.clusterRef.name === cluster || holdersOf(s.metadata.finalizers).includes(cluster)),
    );
  }

  #membersOf(namespace: string, cluster: string): EtcdMember[] {
    return this.#caches.EtcdMember.list().filter(
      (m) => m.metadata.namespace === namespace && m.spec.cluster === cluster,
    );
  }

  #context(cluster: ClusterRef): ManagerContext {
    return {
      cluster,
      signal: AbortSignal.timeout(this.#o.effectTimeoutMs ?? 30_000),
      log: this.#o.log,
      kube: this.#kube,
      instance: this.#o.identity,
      etcd: this.#etcd,
      ...(this.#o.agentImage ? { agentImage: this.#o.agentImage } : {}),
      ...(this.#o.pods ? { pods: this.#o.pods } : {}),
    };
  }
}

/** The retry bookkeeping every machine's context carries, where the kind is not known. */
const bookkeeping = (entry: { readonly runner: { readonly snapshot: unknown } }): Pick<StepBookkeeping, 'retryAt'> =>
  (entry.runner.snapshot as AnyMachineSnapshot).context as StepBookkeeping;
