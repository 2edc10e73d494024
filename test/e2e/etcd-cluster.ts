/**
 * An EtcdCluster under test, driven as a user drives it (create, scale, delete through the API)
 * and checked as a user would check it: the operator says it is there (status), and etcd
 * agrees (its member list, every member a voter, no learner left, no member twice or
 * unaccounted for, the keys written before still there). Every read of the EtcdCluster holds its
 * Available and Degraded to etcd and the Pods (status-truth.ts): a false claim fails the test.
 */
import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import type { EtcdClientTLS } from '../../effects/etcd/index.ts';
import { hexID } from '../../effects/etcd/ids.ts';
import { peerURL } from '../../machines/policy.ts';
import { GROUP as API_GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { createCluster, until } from '../effects/kubernetes/e2e-context.ts';
import { StatusTruth } from './status-world.ts';

const GROUP = { group: API_GROUP, version: VERSION };

/** What etcd says once a cluster has converged. */
export interface Converged {
  readonly clusterID: string;
  /** Member name -> etcd member ID. */
  readonly members: ReadonlyMap<string, string>;
}

/** Clients of the API server a ClusterUnderTest uses. */
export interface Clients {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
}

/** How a test reaches a cluster with spec.tls. */
export interface ClusterTLS {
  /** With client TLS: the certificate the test calls etcd with. */
  readonly client?: EtcdClientTLS;
  /** A name every member's certificate covers (the client Service's), checked instead of the Pod IPs it dials. */
  readonly serverName?: string;
  /** Peer URLs are https. */
  readonly peer?: boolean;
}

/** One EtcdCluster in one namespace. */
export class ClusterUnderTest {
  readonly namespace: string;
  readonly name: string;
  readonly #c: Clients;
  readonly #tls: ClusterTLS;
  readonly #truth: StatusTruth;

  constructor(clients: Clients, namespace: string, name: string, tls: ClusterTLS = {}) {
    this.#c = clients;
    this.namespace = namespace;
    this.name = name;
    this.#tls = tls;
    this.#truth = new StatusTruth(clients.core, namespace, name, tls);
  }

  /** Creates the EtcdCluster: 3 members of etcd 3.6.16 with 64Mi volumes unless the spec says otherwise. */
  create(spec: Partial<EtcdCluster['spec']> = {}): Promise<EtcdCluster> {
    return createCluster(this.#c.custom, this.namespace, this.name, { replicas: 3, ...spec });
  }

  /** Sets spec.replicas, as `kubectl scale` does. */
  scale(replicas: number): Promise<void> {
    return this.patchSpec({ replicas });
  }

  /** Merges `spec` into the EtcdCluster's spec (a null removes a field), as `kubectl patch --type merge` does. */
  async patchSpec(spec: Record<string, unknown>): Promise<void> {
    await this.#c.custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: this.namespace, plural: PLURAL.cluster, name: this.name, body: { spec } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /** Deletes the EtcdCluster. */
  async delete(): Promise<void> {
    await this.#c.custom.deleteNamespacedCustomObject({
      ...GROUP,
      namespace: this.namespace,
      plural: PLURAL.cluster,
      name: this.name,
    });
  }

  /**
   * The EtcdCluster as stored; throws UntrueStatus (which ends any `until`) when its Available or
   * Degraded has said what etcd or the Pods contradict for longer than the manager is given.
   */
  async get(): Promise<EtcdCluster> {
    const statusAt = Date.now();
    const cluster = await this.#read();
    await this.#truth.check(cluster, statusAt);
    return cluster;
  }

  /** The EtcdCluster as stored, its status not judged. */
  #read(): Promise<EtcdCluster> {
    return this.#c.custom.getNamespacedCustomObject({
      ...GROUP,
      namespace: this.namespace,
      plural: PLURAL.cluster,
      name: this.name,
    }) as Promise<EtcdCluster>;
  }

  /** The cluster's EtcdMembers. */
  async members(): Promise<EtcdMember[]> {
    const list = (await this.#c.custom.listNamespacedCustomObject({
      ...GROUP,
      namespace: this.namespace,
      plural: PLURAL.member,
    })) as { items: EtcdMember[] };
    return list.items.filter((m) => m.spec.cluster === this.name);
  }

  /** Waits until `member` is gone and `replicas` EtcdMembers are back; returns their names. */
  replaced(member: string, replicas: number): Promise<(string | undefined)[]> {
    // What the wait saw last, said while it waits and when it times out: each member's state and the cluster's.
    let seen = 'nothing read yet';
    return until(
      () => `${member} replaced (now ${seen})`,
      async () => {
        const members = await this.members();
        const names = members.map((m) => m.metadata.name);
        const states = members.map((m) => `${m.metadata.name ?? '?'} ${m.status?.state ?? 'no state'}`);
        seen = `${states.join(', ')}; ${describeStatus(await this.#read())}`;
        return names.includes(member) || names.length < replicas ? undefined : names;
      },
    );
  }

  /** Waits until the operator reports the target reached: Steady with `replicas` ready voters (Dormant for 0). */
  async settled(replicas: number, timeoutMs = Infinity): Promise<EtcdCluster> {
    let seen = 'no status yet';
    return until(
      () => `${this.name} settled at ${replicas} (now ${seen})`,
      async () => {
        const c = await this.get();
        const s = c.status;
        seen = describeStatus(c);
        const step = replicas === 0 ? 'Dormant' : 'Steady';
        const ok =
          s !== undefined &&
          s.observedGeneration === c.metadata.generation &&
          s.observed?.step === step &&
          s.observed.target?.replicas === replicas &&
          (s.readyMembers ?? 0) === replicas &&
          s.conditions?.some((x) => x.type === 'Available' && x.status === (replicas > 0 ? 'True' : 'False'));
        return ok ? c : undefined;
      },
      timeoutMs,
    );
  }

  /** How the test reaches the cluster (its client certificate with TLS). */
  get tls(): ClusterTLS {
    return this.#tls;
  }

  /** The IPs of the member Pods that have one and are not being deleted, by Pod name. */
  async podIPs(): Promise<Map<string, string>> {
    const pods = await this.#c.core.listNamespacedPod({
      namespace: this.namespace,
      labelSelector: `etcd-operator.dev/cluster=${this.name}`,
    });
    return new Map(
      pods.items
        .filter((p) => p.status?.podIP && !p.metadata?.deletionTimestamp)
        .map((p) => [p.metadata?.name ?? '', p.status?.podIP ?? '']),
    );
  }

  /** A client of the running members, by their Pod IPs (the host has no cluster DNS); with client TLS, over https. */
  async client(): Promise<Etcd3> {
    const tls = this.#tls.client;
    const hosts = [...(await this.podIPs()).values()].map((ip) => `${tls ? 'https' : 'http'}://${ip}:2379`);
    if (hosts.length === 0) throw new Error(`no Pod of ${this.name} has an IP`);
    if (!tls) return new Etcd3({ hosts, dialTimeout: 3000 });
    return new Etcd3({
      hosts,
      dialTimeout: 3000,
      credentials: { rootCertificate: tls.ca, certChain: tls.cert, privateKey: tls.key },
      ...(this.#tls.serverName ? { grpcOptions: { 'grpc.ssl_target_name_override': this.#tls.serverName } } : {}),
    });
  }

  /**
   * Checks what etcd says against what the operator says: `replicas` members, all voters, each
   * the etcd member of exactly one EtcdMember (by peer URL), and the same IDs the EtcdMembers
   * report. Throws with the whole picture when anything differs.
   */
  async verify(replicas: number): Promise<Converged> {
    const members = (await this.members()).filter((m) => !m.metadata.deletionTimestamp);
    const etcd = await this.client();
    try {
      const list = await etcd.cluster.memberList({ linearizable: true });
      const picture = JSON.stringify({
        etcd: list.members.map((m) => ({ id: hexID(m.ID), name: m.name, peer: m.peerURLs, learner: m.isLearner })),
        members: members.map((m) => [m.metadata.name, m.status?.memberID]),
      });
      const fail = (why: string): never => {
        throw new Error(`${this.name}: ${why}: ${picture}`);
      };
      if (list.members.length !== replicas) fail(`etcd has ${list.members.length} members, want ${replicas}`);
      if (members.length !== replicas) fail(`${members.length} EtcdMembers, want ${replicas}`);
      if (list.members.some((m) => m.isLearner)) fail('a learner was left');
      const byName = new Map<string, string>();
      for (const m of members) {
        const name = m.metadata.name ?? '';
        const url = peerURL({ namespace: this.namespace, name: this.name, peerTLS: this.#tls.peer === true }, name);
        const found = list.members.filter((e) => e.peerURLs.includes(url));
        if (found.length !== 1) fail(`${found.length} etcd members have the peer URL of ${name}`);
        const id = hexID(found[0]!.ID);
        if (m.status?.memberID !== id) fail(`EtcdMember ${name} reports member ${m.status?.memberID}, etcd ${id}`);
        byName.set(name, id);
      }
      return { clusterID: hexID(list.header.cluster_id), members: byName };
    } finally {
      etcd.close();
    }
  }

  /** Writes `count` keys under `prefix`. */
  async write(prefix: string, count: number): Promise<void> {
    const etcd = await this.client();
    try {
      for (let i = 0; i < count; i++) await etcd.put(`${prefix}/${i}`).value(`value-${i}`);
    } finally {
      etcd.close();
    }
  }

  /** How many of the `count` keys under `prefix` read back with their values. */
  async readBack(prefix: string, count: number): Promise<number> {
    const etcd = await this.client();
    try {
      const kv = await etcd.getAll().prefix(`${prefix}/`).strings();
      return Array.from({ length: count }, (_, i) => kv[`${prefix}/${i}`] === `value-${i}`).filter(Boolean).length;
    } finally {
      etcd.close();
    }
  }
}

/** Where a cluster stands, in one line: its step, ready members and the conditions not as wished. */
export function describeStatus(c: EtcdCluster): string {
  const s = c.status;
  if (!s) return 'no status yet';
  const notFine = (s.conditions ?? [])
    .filter((x) => (x.type === 'Degraded' ? x.status !== 'False' : x.status !== 'True'))
    .map((x) => `${x.type}=${x.status} ${x.reason}: ${x.message}`);
  return [
    `step ${s.observed?.step ?? '?'} (${s.observed?.state ?? '?'})`,
    `ready ${s.readyMembers ?? 0}`,
    `generation ${s.observedGeneration ?? '?'}/${c.metadata.generation ?? '?'}`,
    ...notFine,
  ].join('; ');
}
