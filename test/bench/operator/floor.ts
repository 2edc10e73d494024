/**
 * The floors the operator is measured against: the same member Pods, PVCs and Services (the
 * operator's own builders, same etcd version, same volumes) created straight through the API and
 * joined by the shortest script etcd allows: seed Pod, wait Ready; then per member: add it as a
 * learner, create its Pod with the full initial cluster (state existing), wait until its etcd
 * answers, promote it (retried every RETRY_MS while etcd says not in sync), next. No operator
 * logic in between, but etcd's own rule stays: it refuses a membership change until every voter
 * has been connected for 5 s, so an add right after a promote is retried every RETRY_MS too.
 * The static floor (buildWhole) starts every member at once with the full initial cluster.
 */
import { randomUUID } from 'node:crypto';
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../../api/v1alpha1/index.ts';
import { apiVersion } from '../../../api/v1alpha1/index.ts';
import { initialCluster } from '../../../effects/etcd/add-learner.ts';
import { EtcdClients, hexID } from '../../../effects/etcd/index.ts';
import {
  buildClientService,
  buildEtcdMember,
  buildHeadlessService,
  buildPod,
  buildPVC,
  type KubeClients,
} from '../../../effects/kubernetes/index.ts';
import type { ClusterRef } from '../../../effects/types.ts';
import { memberName, peerURL, seedInitialCluster } from '../../../machines/policy.ts';
import { poll, since } from './poll.ts';

/** How often a refused add or promote is asked again, and how often the API and etcd are polled. */
export const RETRY_MS = 50;
const VERSION = '3.6.16';
/**
 * etcd's refusals that mean "not yet" (a promote before the learner caught up, a change within
 * 5 s of the last, a member just promoted that has not applied it yet and still refuses as a
 * learner) and answers lost on a loaded machine; anything else stops the floor.
 */
const NOT_YET =
  /in sync with leader|unhealthy cluster|not enough started members|not supported for learner|no leader|leader changed|DEADLINE_EXCEEDED|No connection established/;

/** How one member joined, in ms from the start of its join. */
export interface FloorJoin {
  readonly member: string;
  readonly addMs: number;
  readonly addTries: number;
  /** Pod created -> its etcd answers a status call on its Pod IP. */
  readonly startMs: number;
  readonly promoteMs: number;
  readonly promoteTries: number;
  readonly totalMs: number;
}

/** One floor cluster: apply -> every member a healthy voter. */
export interface FloorRun {
  readonly size: number;
  readonly totalMs: number;
  /** Seed objects created -> the seed's etcd first answers / the seed Pod is Ready (probe period 5 s). */
  readonly seedAnsweringMs: number;
  readonly seedReadyMs: number;
  readonly joins: readonly FloorJoin[];
}

const unowned = <T extends { metadata?: V1ObjectMeta }>(o: T): T => {
  // No owner: nothing of the operator's exists here, and the garbage collector must not take them.
  delete o.metadata?.ownerReferences;
  return o;
};

/** A floor cluster in one namespace: its objects through the API, its etcd by Pod IP. */
export class FloorCluster {
  readonly #kube: KubeClients;
  readonly #cluster: EtcdCluster;
  readonly #ref: ClusterRef;
  readonly #ips = new Map<string, string>();
  /** Members promoted (and the seed): the only ones asked cluster-wide calls, which a learner refuses. */
  readonly #voters = new Set<string>();
  readonly etcd: EtcdClients;
  size = 0;

  constructor(kube: KubeClients, namespace: string, name: string) {
    this.#kube = kube;
    this.#ref = { namespace, name, uid: randomUUID() };
    this.#cluster = {
      apiVersion,
      kind: 'EtcdCluster',
      metadata: { name, namespace, uid: this.#ref.uid },
      spec: { replicas: 1, version: VERSION, storage: { size: '64Mi' } },
    } as EtcdCluster;
    const url = (member: string): string => `http://${this.#ips.get(member) ?? '127.0.0.1'}:2379`;
    this.etcd = new EtcdClients(() => ({ endpoints: [...this.#voters].map(url), clientURL: url }), {
      callTimeoutMs: 3000,
    });
  }

  /** Creates the seed and `size - 1` more members, one after the other. */
  async build(size: number): Promise<FloorRun> {
    const t0 = performance.now();
    const core = this.#kube.core;
    const namespace = this.#ref.namespace;
    await core.createNamespacedService({ namespace, body: unowned(buildHeadlessService(this.#cluster)) });
    await core.createNamespacedService({ namespace, body: unowned(buildClientService(this.#cluster)) });
    const seed = memberName(this.#ref.name, 0);
    await this.#createMember(seed, 0, true, seedInitialCluster(this.#ref, seed));
    let seedAnsweringMs = 0;
    await poll(`${seed} Ready`, RETRY_MS, async () => {
      const pod = await this.#pod(seed);
      if (!seedAnsweringMs && pod && (await this.#answers(seed))) seedAnsweringMs = since(t0);
      return pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') || undefined;
    });
    const seedReadyMs = since(t0);
    this.#voters.add(seed);
    this.size = 1;
    const joins: FloorJoin[] = [];
    while (this.size < size) joins.push(await this.join());
    await this.healthy();
    return { size, totalMs: since(t0), seedAnsweringMs: seedAnsweringMs || seedReadyMs, seedReadyMs, joins };
  }

  /**
   * The static floor: every member created at once with the full initial cluster (etcd's static
   * bootstrap, what the operator does for a new cluster), until each is a healthy voter.
   */
  async buildWhole(size: number): Promise<FloorRun> {
    const t0 = performance.now();
    const core = this.#kube.core;
    const namespace = this.#ref.namespace;
    await core.createNamespacedService({ namespace, body: unowned(buildHeadlessService(this.#cluster)) });
    await core.createNamespacedService({ namespace, body: unowned(buildClientService(this.#cluster)) });
    const names = Array.from({ length: size }, (_, i) => memberName(this.#ref.name, i));
    const initial = names.map((m) => `${m}=${peerURL(this.#ref, m)}`).join(',');
    await Promise.all(names.map((m, i) => this.#createMember(m, i, true, initial)));
    await poll('every member Pod with an address', RETRY_MS, async () => {
      for (const m of names) if (!(await this.#pod(m))) return undefined;
      return true;
    });
    for (const m of names) this.#voters.add(m);
    this.size = size;
    await this.healthy();
    const totalMs = since(t0);
    return { size, totalMs, seedAnsweringMs: 0, seedReadyMs: 0, joins: [] };
  }

  /** Adds the next member: learner, Pod, started, promoted. */
  async join(): Promise<FloorJoin> {
    const member = memberName(this.#ref.name, this.size);
    const t0 = performance.now();
    const client = this.etcd.cluster(this.#ref);
    const add = await this.#retry(() =>
      client.cluster.memberAdd({ peerURLs: [peerURL(this.#ref, member)], isLearner: true }),
    );
    const t1 = performance.now();
    await this.#createMember(member, this.size, false, initialCluster(add.value.members, add.value.member.ID, member));
    await poll(
      `${member} answers`,
      RETRY_MS,
      async () => ((await this.#pod(member)) && (await this.#answers(member))) || undefined,
    );
    const t2 = performance.now();
    const promote = await this.#retry(() =>
      this.etcd.cluster(this.#ref).cluster.memberPromote({ ID: add.value.member.ID }),
    );
    this.#voters.add(member);
    this.size += 1;
    const ms = (a: number, b: number): number => Math.round(b - a);
    return {
      member,
      addMs: ms(t0, t1),
      addTries: add.tries,
      startMs: ms(t1, t2),
      promoteMs: since(t2),
      promoteTries: promote.tries,
      totalMs: since(t0),
    };
  }

  /** Waits until etcd lists `size` voters and each answers a status call. */
  async healthy(): Promise<void> {
    await poll('every member a healthy voter', RETRY_MS, async () => {
      const list = await this.etcd.cluster(this.#ref).cluster.memberList({ linearizable: true });
      if (list.members.length !== this.size || list.members.some((m) => m.isLearner || m.name === '')) return undefined;
      for (const m of [...this.#ips.keys()]) if (!(await this.#answers(m))) return undefined;
      return list.members.map((m) => hexID(m.ID));
    });
  }

  /** Closes the etcd clients. */
  close(): void {
    this.etcd.close();
  }

  async #createMember(member: string, ordinal: number, bootstrap: boolean, initial: string): Promise<void> {
    const m = buildEtcdMember(this.#cluster, { member, ordinal, bootstrap, initialCluster: initial, version: VERSION });
    m.metadata.uid = randomUUID();
    const pvc = buildPVC(m, this.#cluster);
    if (pvc)
      await this.#kube.core.createNamespacedPersistentVolumeClaim({
        namespace: this.#ref.namespace,
        body: unowned(pvc),
      });
    await this.#kube.core.createNamespacedPod({
      namespace: this.#ref.namespace,
      body: unowned(buildPod(m, this.#cluster)),
    });
  }

  /** The member's Pod once it has an IP (noted for the etcd clients). */
  async #pod(member: string): Promise<V1Pod | undefined> {
    const pod = await this.#kube.core.readNamespacedPod({ namespace: this.#ref.namespace, name: member });
    if (!pod.status?.podIP) return undefined;
    this.#ips.set(member, pod.status.podIP);
    return pod;
  }

  async #answers(member: string): Promise<boolean> {
    return this.etcd
      .member(this.#ref, member)
      .maintenance.status({ deadline: Date.now() + 1000 })
      .then(
        () => true,
        () => false,
      );
  }

  /** Calls `fn` until etcd stops saying "not yet", every RETRY_MS. */
  async #retry<T>(fn: () => Promise<T>): Promise<{ value: T; tries: number }> {
    for (let tries = 1; ; tries++) {
      try {
        return { value: await fn(), tries };
      } catch (err) {
        if (!NOT_YET.test(String(err)) || tries > 2000) throw err;
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  }
}
