/**
 * The control loop: informers on EtcdClusters, EtcdMembers and their Pods and claims feed a
 * keyed work queue; working a key feeds everything observed about the object (and, for a
 * cluster, a fresh etcd probe) to the object's Runner, which journals each step and runs its
 * intents. A key whose machine moved is worked again at once, so the loop goes on until
 * nothing changes: the happy path waits only for the world, never for a timer. Timers exist
 * for back-off retries, progress deadlines and the health probe of a cluster at rest, which
 * backs off while the cluster stays the same (probe-schedule.ts).
 */
import type { KubeConfig, V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';
import { EtcdClients, etcdHandlers, probeCluster, type EtcdContext } from '../effects/etcd/index.ts';
import {
  getSecret,
  kubeClients,
  kubernetesHandlers,
  pvcName,
  restoreJobName,
  snapshotDeleteJobName,
  snapshotJobName,
  type KubeClients,
  type KubeContext,
  type PodSettings,
} from '../effects/kubernetes/index.ts';
import type { ClusterRef, HandlerTable } from '../effects/types.ts';
import type { ClusterObjectRef, EtcdObservation, StepBookkeeping } from '../machines/index.ts';
import { etcdMemberFor, TAG } from '../machines/index.ts';
import { Informer, type KubeObject } from './informer.ts';
import type { JournalKeeper } from './journal-keeper.ts';
import type { ManagerMetrics } from './metrics.ts';
import { dataLostObserved } from './data-check.ts';
import {
  claimsListed,
  clusterObserved,
  memberObserved,
  membersListed,
  podObserved,
  pvcObserved,
  upgradeSnapshotsListed,
} from './observe.ts';
import { jobObservation, snapshotClusterObserved, snapshotObserved } from './observe-snapshot.ts';
import { scheduledSnapshotsListed, scheduleObserved } from './observe-schedule.ts';
import { nextScheduleTime } from '../machines/snapshot-schedule-decide.ts';
import { nextDefragTime } from '../machines/cluster-maintenance.ts';
import { ObjectRunners, type AnyEntry, type ClusterEntry } from './object-runners.ts';
import { WorkQueue } from './queue.ts';
import { ClusterTrust } from './cluster-trust.ts';
import { OperatorCertificates } from './operator-certificates.ts';
import { ProbeSchedule, type RestKind } from './probe-schedule.ts';
import { etcdResolver, type EtcdAddressMode } from './resolver.ts';
import { collectionPath, listCollection, memberKey, snapshotKey, WATCHES, type WatchSpec } from './watches.ts';

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

/** The manager's effect context: the Kubernetes and etcd clients. */
export type ManagerContext = KubeContext & EtcdContext;

/** Longest a schedule sleeps before it is looked at again, however far its next fire time. */
const SCHEDULE_LOOK_MS = 3_600_000;
/** How soon a cluster whose etcd did not answer the probe is worked (and probed) again. */
const UNANSWERED_PROBE_MS = 5_000;

/**
 * What a cluster's probe found: nothing asked (no member Pod has an address, or the cluster
 * goes), no answer, no certificate to ask with, or an answer the same as the last one or not.
 */
type Probed = 'none' | 'unanswered' | 'noCertificate' | 'same' | 'changed';

const HANDLERS = { ...kubernetesHandlers, ...etcdHandlers } satisfies HandlerTable<ManagerContext>;

/** Runs the machines of every EtcdCluster and EtcdMember it can see. */
export class Controller {
  readonly #o: ControllerOptions;
  readonly #kube: KubeClients;
  readonly #etcd: EtcdClients;
  /** The operator's client certificate of each cluster with client TLS. */
  readonly #certs: OperatorCertificates;
  readonly #trust: ClusterTrust;
  readonly #queue: WorkQueue;
  readonly #clusters: Informer<EtcdCluster>;
  readonly #members: Informer<EtcdMember>;
  readonly #pods: Informer<V1Pod>;
  readonly #pvcs: Informer<V1PersistentVolumeClaim>;
  readonly #snapshots: Informer<EtcdSnapshot>;
  readonly #jobs: Informer<V1Job>;
  readonly #jobPods: Informer<V1Pod>;
  readonly #schedules: Informer<EtcdSnapshotSchedule>;
  readonly #runners: ObjectRunners<ManagerContext>;
  /** The last etcd probe per cluster uid: null when no member answered. */
  readonly #probes = new Map<string, EtcdObservation | null>();
  /** When each cluster at rest is probed next. */
  readonly #schedule: ProbeSchedule;
  readonly #now: () => number;

  constructor(options: ControllerOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#schedule = new ProbeSchedule({ baseMs: options.resyncMs ?? 15_000, maxMs: options.maxResyncMs ?? 120_000 });
    this.#kube = kubeClients(options.kubeConfig);
    const readSecret = (ns: string, name: string) =>
      getSecret(this.#kube, ns, name, AbortSignal.timeout(options.effectTimeoutMs ?? 30_000));
    const reads = { now: this.#now, ...(options.secretReadMs ? { maxAgeMs: options.secretReadMs } : {}) };
    this.#certs = new OperatorCertificates(readSecret, reads);
    this.#trust = new ClusterTrust(readSecret, reads);
    this.#etcd = new EtcdClients(
      etcdResolver(options.etcdAddress, {
        members: (ns, cluster) => this.#membersOf(ns, cluster),
        pod: (ns, name) => this.#pods.get(ns, name),
        cluster: (ns, name) => this.#clusters.get(ns, name),
        credentials: (uid) => this.#certs.get(uid),
      }),
      { callTimeoutMs: 3000 },
    );
    this.#queue = new WorkQueue((key) => this.#work(key), {
      concurrency: options.concurrency ?? 4,
      onError: (key, err, attempt) => {
        options.metrics.errors.inc({ kind: key.split('/')[0] ?? '' });
        options.log.warn(
          { key, attempt, err: err instanceof Error ? err.message : String(err) },
          'reconcile failed; retrying with back-off',
        );
      },
    });
    this.#runners = new ObjectRunners<ManagerContext>({
      journal: options.journal,
      log: options.log,
      metrics: options.metrics,
      kube: this.#kube,
      handlers: HANDLERS,
      context: (cluster) => this.#context(cluster),
      now: this.#now,
    });
    // A new journal took the place of a damaged one: every object is worked again, and adopted.
    options.journal.onReplaced(() => {
      for (const key of this.#runners.keys()) this.#queue.add(key);
    });
    const informer = <T extends KubeObject>(w: WatchSpec<T>): Informer<T> => {
      const labelSelector = w.selector;
      return new Informer<T>({
        name: w.resource,
        kubeConfig: options.kubeConfig,
        path: collectionPath(w.collection, options.namespace),
        labelSelector,
        list: () => listCollection<T>(this.#kube, w.collection, options.namespace, labelSelector),
        log: options.log,
        onList: () => options.metrics.relists.inc({ resource: w.resource }),
        onChange: (_, o) => {
          for (const key of w.route(o, routing)) this.#queue.add(key);
        },
      });
    };
    const routing = {
      membersOf: (ns: string, cluster: string) => this.#membersOf(ns, cluster),
      snapshotsOf: (ns: string, cluster: string) => this.#snapshotsOf(ns, cluster),
    };
    this.#clusters = informer(WATCHES.clusters);
    this.#members = informer(WATCHES.members);
    this.#pods = informer(WATCHES.pods);
    this.#pvcs = informer(WATCHES.pvcs);
    this.#snapshots = informer(WATCHES.snapshots);
    this.#jobs = informer(WATCHES.jobs);
    this.#jobPods = informer(WATCHES.jobPods);
    this.#schedules = informer(WATCHES.schedules);
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

  #informers() {
    return [
      this.#clusters,
      this.#members,
      this.#pods,
      this.#pvcs,
      this.#snapshots,
      this.#jobs,
      this.#jobPods,
      this.#schedules,
    ];
  }

  /** Starts the informers; resolves once their caches are filled (work starts as they fill). */
  async start(): Promise<void> {
    // Pods, claims, members and Jobs first, so the first cluster and snapshot reconciles see them.
    await Promise.all([
      this.#pods.start(),
      this.#pvcs.start(),
      this.#members.start(),
      this.#jobs.start(),
      this.#jobPods.start(),
    ]);
    await this.#clusters.start();
    await this.#snapshots.start();
    // After the snapshots: a schedule's first look sees the snapshots it made.
    await this.#schedules.start();
  }

  /** Stops watching and waits for the work in flight. */
  async stop(): Promise<void> {
    for (const i of this.#informers()) i.stop();
    await this.#queue.stop();
    this.#etcd.close();
  }

  /** Works a key; one that met a damaged or replaced journal is worked again at once, on the new one. */
  async #work(key: string): Promise<void> {
    if ((await this.#runners.withJournal(key, () => this.#workKey(key))) === 'again') this.#queue.add(key);
  }

  async #workKey(key: string): Promise<void> {
    const [kind, ns = '', name = ''] = key.split('/');
    if (!this.synced) return this.#queue.addAfter(key, 100);
    this.#o.log.debug({ key }, 'work');
    if (kind === 'EtcdCluster') return this.#workCluster(key, ns, name);
    if (kind === 'EtcdSnapshot') return this.#workSnapshot(key, ns, name);
    if (kind === 'EtcdSnapshotSchedule') return this.#workSchedule(key, ns, name);
    return this.#workMember(key, ns, name);
  }

  async #workCluster(key: string, ns: string, name: string): Promise<void> {
    const object = this.#clusters.get(ns, name);
    if (!object) {
      const uid = this.#runners.drop(key);
      if (uid) this.#forget(uid);
      return;
    }
    // Before anything may call etcd (recovering an intent included): the certificate to call it with.
    const tlsProblem = await this.#certs.refresh(object);
    const trust = await this.#trust.refresh(object);
    const entry = await this.#runners.cluster(key, object);
    const before = entry.seq;
    await this.#retryIfDue(entry);
    // Each observation is read from the caches as it is fed, and stamped then: one fed after the
    // intents of an earlier one ran is as new as that, and its step is timed from it.
    const now = this.#now;
    // The machine decides nothing until it has both (a journal-less one adopts what it finds).
    await entry.runner.feed(
      membersListed(name, this.#membersOf(ns, name), now(), (member) => this.#pods.get(ns, member)),
    );
    await entry.runner.feed(clusterObserved(object, now(), trust));
    await entry.runner.feed(
      claimsListed(
        name,
        this.#pvcs.list().filter((p) => p.metadata?.namespace === ns),
        now(),
      ),
    );
    if (object.spec.bootstrap?.restore) {
      const pods = this.#jobPods.list().filter((p) => p.metadata?.namespace === ns);
      const job = jobObservation(this.#jobs.get(ns, restoreJobName(name)), pods);
      await entry.runner.feed({ type: 'k8s.restoreJob.observed', at: now(), job });
    }
    const inNamespace = this.#snapshots.list().filter((s) => s.metadata.namespace === ns);
    await entry.runner.feed(upgradeSnapshotsListed(name, inNamespace, now()));
    const probed = object.metadata.deletionTimestamp ? 'none' : await this.#probe(entry, object, tlsProblem);
    // etcd unanswered (not up yet, or no usable certificate: a Secret cert-manager is still
    // writing): no watch event says when that changes, so ask again soon. No member Pod with an
    // address is not such a case: the Pods' watch says when one has one.
    if (probed === 'unanswered' || probed === 'noCertificate') this.#queue.addAfter(key, UNANSWERED_PROBE_MS);
    await this.#runners.refreshClusterStatus(entry, object);
    const { snapshot } = entry.runner;
    const context = snapshot.context;
    this.#timers(key, context);
    // Woken at the next defragmentation fire time: what it is fed then carries that time (`at`).
    const defragAt = nextDefragTime(context);
    if (defragAt !== null)
      this.#queue.addAfter(key, Math.min(Math.max(0, defragAt - this.#now()) + 1, SCHEDULE_LOOK_MS));
    if (entry.seq !== before) {
      this.#schedule.reset(entry.cluster.uid);
      this.#queue.add(key);
    } else if (snapshot.hasTag(TAG.idle)) {
      const delay = this.#schedule.next(entry.cluster.uid, restKind(snapshot, probed));
      if (delay !== null) this.#queue.addAfter(key, delay);
    } else
      this.#queue.addAfter(
        key,
        Math.max(0, context.stepStartedAt + context.progressDeadlineSeconds * 1000 - this.#now()) + 1000,
      );
  }

  async #workMember(key: string, ns: string, name: string): Promise<void> {
    const object = this.#members.get(ns, name);
    if (!object) {
      this.#runners.drop(key);
      return;
    }
    const cluster = this.#clusters.get(ns, object.spec.cluster);
    if (cluster) await this.#certs.refresh(cluster);
    const entry = await this.#runners.member(key, object, cluster);
    const before = entry.seq;
    await this.#retryIfDue(entry);
    // Stamped as each is fed (see #workCluster).
    const now = this.#now;
    const pod = this.#pods.get(ns, name);
    await entry.runner.feed(memberObserved(object, cluster, now()));
    await entry.runner.feed(podObserved(pod, now()));
    if (object.spec.storage.medium !== 'Memory')
      await entry.runner.feed(pvcObserved(this.#pvcs.get(ns, pvcName(name)), now()));
    const lost = dataLostObserved(pod, now());
    if (lost) await entry.runner.feed(lost);
    const probe = this.#probes.get(entry.cluster.uid);
    if (probe) {
      const ref: ClusterObjectRef = {
        namespace: ns,
        name: object.spec.cluster,
        uid: entry.cluster.uid,
        peerTLS: entry.runner.snapshot.context.member.peerTLS === true,
      };
      const member = etcdMemberFor(ref, probe, name) ?? null;
      await entry.runner.feed({ type: 'etcd.member.observed', at: now(), member });
    }
    await this.#runners.refreshMemberStatus(entry, object);
    this.#timers(key, entry.runner.snapshot.context);
    if (entry.seq !== before) this.#queue.add(key);
  }

  async #workSnapshot(key: string, ns: string, name: string): Promise<void> {
    const object = this.#snapshots.get(ns, name);
    if (!object) {
      this.#runners.drop(key);
      return;
    }
    const entry = await this.#runners.snapshot(key, object);
    const before = entry.seq;
    await this.#retryIfDue(entry);
    const at = this.#now();
    const cluster = this.#clusters.get(ns, object.spec.clusterRef.name);
    const probe = cluster ? this.#probes.get(cluster.metadata.uid ?? '') : undefined;
    const pods = this.#jobPods.list().filter((p) => p.metadata?.namespace === ns);
    await entry.runner.feed(snapshotObserved(object, at));
    await entry.runner.feed(snapshotClusterObserved(cluster, probe, at));
    const job = jobObservation(this.#jobs.get(ns, snapshotJobName(name)), pods, object);
    await entry.runner.feed({ type: 'k8s.job.observed', at, job });
    const deleteJob = jobObservation(this.#jobs.get(ns, snapshotDeleteJobName(name)), pods);
    await entry.runner.feed({ type: 'k8s.deleteJob.observed', at, job: deleteJob });
    await this.#runners.refreshSnapshotStatus(entry, object);
    this.#timers(key, entry.runner.snapshot.context);
    if (entry.seq !== before) this.#queue.add(key);
  }

  async #workSchedule(key: string, ns: string, name: string): Promise<void> {
    const object = this.#schedules.get(ns, name);
    if (!object) {
      this.#runners.drop(key);
      return;
    }
    const entry = await this.#runners.schedule(key, object);
    const before = entry.seq;
    await this.#retryIfDue(entry);
    const at = this.#now();
    await entry.runner.feed(scheduleObserved(object, at));
    await entry.runner.feed(scheduledSnapshotsListed(object, this.#snapshots.list(), at));
    await this.#runners.refreshScheduleStatus(entry, object);
    const context = entry.runner.snapshot.context;
    this.#timers(key, context);
    // Woken at the next fire time; a far one is looked at again within the hour (timers cap near 24.8 days).
    const next = nextScheduleTime(context);
    if (next !== null) this.#queue.addAfter(key, Math.min(Math.max(0, next - this.#now()) + 1, SCHEDULE_LOOK_MS));
    if (entry.seq !== before) this.#queue.add(key);
  }

  /**
   * Asks etcd for the member list and health; members are worked again when it changed. Without a
   * usable client certificate nothing is asked: what is wrong with its Secret is what is observed.
   */
  async #probe(entry: ClusterEntry<ManagerContext>, cluster: EtcdCluster, tlsProblem: string | null): Promise<Probed> {
    const ref = entry.cluster;
    const asked = this.#etcd.endpoints(ref).length > 0;
    // Parked, or no Pod has an address yet: its etcd clients wait for nothing, so they go.
    if (!asked) this.#etcd.forget(ref.uid);
    const observed = await this.#observe(ref, entry.runner.snapshot.context.members.length > 0, tlsProblem);
    if (observed === undefined) return 'none';
    this.#o.metrics.probes.inc({ result: typeof observed === 'string' ? 'unreachable' : 'answered' });
    // Stamped once etcd answered: the step it leads to is timed from the answer, not from the question.
    const at = this.#now();
    await entry.runner.feed(
      typeof observed === 'string'
        ? { type: 'etcd.unreachable', at, error: observed }
        : { type: 'etcd.members.listed', at, etcd: observed },
    );
    const previous = this.#probes.get(ref.uid);
    // Database sizes move with every write, and no member or snapshot reads them.
    const now = typeof observed === 'string' ? null : { ...observed, sizes: undefined };
    this.#probes.set(ref.uid, now);
    const same = JSON.stringify(previous) === JSON.stringify(now);
    if (!same) {
      for (const m of this.#membersOf(ref.namespace, cluster.metadata.name ?? ''))
        this.#queue.add(memberKey(ref.namespace, m.metadata.name ?? ''));
      for (const s of this.#snapshotsOf(ref.namespace, cluster.metadata.name ?? ''))
        this.#queue.add(snapshotKey(ref.namespace, s.metadata.name ?? ''));
    }
    if (now !== null) return same ? 'same' : 'changed';
    return !asked ? 'none' : tlsProblem ? 'noCertificate' : 'unanswered';
  }

  /** Forgets what is kept about a cluster that went: its last probe, schedule, certificate and etcd clients. */
  #forget(uid: string): void {
    this.#probes.delete(uid);
    this.#schedule.reset(uid);
    this.#certs.forget(uid);
    this.#trust.forget(uid);
    this.#etcd.forget(uid);
  }

  /** etcd's answer, or why there is none; undefined when there is nothing to ask yet. */
  async #observe(
    ref: ClusterRef,
    hasMembers: boolean,
    tlsProblem: string | null,
  ): Promise<EtcdObservation | string | undefined> {
    const endpoints = this.#etcd.endpoints(ref);
    // Dormant, or no Pod has an address yet: nothing to ask, and nothing is healthy.
    if (endpoints.length === 0) return hasMembers ? 'no member Pod runs' : undefined;
    if (tlsProblem) return `the operator has no client certificate to call etcd with: ${tlsProblem}`;
    try {
      return await probeCluster(this.#etcd, ref, AbortSignal.timeout(10_000));
    } catch (err) {
      this.#o.log.info(
        { cluster: `${ref.namespace}/${ref.name}`, err: err instanceof Error ? err.message : String(err) },
        'etcd probe: no member answered',
      );
      return `none of ${endpoints.length} member${endpoints.length === 1 ? '' : 's'} answered the member list`;
    }
  }

  /** A back-off that has run out is fed first, as the tick it is, so the journal says why the retry happened. */
  async #retryIfDue(entry: AnyEntry<ManagerContext>): Promise<void> {
    const { retryAt } = entry.runner.snapshot.context;
    const at = this.#now();
    if (retryAt !== null && at >= retryAt) await entry.runner.feed({ type: 'timer.tick', at });
  }

  /** A retry back-off in the machine's context is a timer here. */
  #timers(key: string, context: Pick<StepBookkeeping, 'retryAt'>): void {
    // A back-off already due was fed as a tick at the start of this work: one the machine did not
    // take is looked at again in a second, never at once (that would spin).
    if (context.retryAt === null) return;
    const wait = context.retryAt - this.#now();
    this.#queue.addAfter(key, wait < 0 ? 1000 : wait + 1);
  }

  #snapshotsOf(namespace: string, cluster: string): EtcdSnapshot[] {
    return this.#snapshots
      .list()
      .filter((s) => s.metadata.namespace === namespace && s.spec.clusterRef.name === cluster);
  }

  #membersOf(namespace: string, cluster: string): EtcdMember[] {
    return this.#members.list().filter((m) => m.metadata.namespace === namespace && m.spec.cluster === cluster);
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

/** How the probe schedule reads a cluster at rest after its work. */
function restKind(snapshot: { matches(state: 'dormant' | 'steady'): boolean }, probed: Probed): RestKind {
  if (snapshot.matches('dormant') && probed === 'none') return 'dormant';
  return snapshot.matches('steady') && probed === 'same' ? 'quiet' : 'resting';
}
