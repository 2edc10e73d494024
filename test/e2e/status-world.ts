/**
 * What the e2e tests hold an EtcdCluster's Available and Degraded against, read after its status
 * (status-truth.ts judges): the member Pods (readiness, restarts) and etcd itself (a linearizable
 * member list from any member, each voter's own status call), by Pod IP as the tests reach etcd.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { EtcdClients } from '../../effects/etcd/clients.ts';
import { hexID } from '../../effects/etcd/ids.ts';
import { ETCD_CONTAINER } from '../../effects/kubernetes/build-pod.ts';
import { LABEL } from '../../effects/kubernetes/meta.ts';
import type { ClusterTLS } from './etcd-cluster.ts';
import { managerSince } from '../../localcluster/manager-process.ts';
import { judge, newMemory, type EtcdSeen, type PodSeen, type TruthMemory, type WorldSeen } from './status-truth.ts';

/** Each call's deadline: a member that takes longer counts as not answering. */
const CALL_MS = 3000;
/** Reads closer together than this are not judged again unless Available or Degraded changed. */
const EVERY_MS = 1000;

/** What each cluster's judge remembers, by uid: one memory however many ClusterUnderTest read it. */
const memories = new Map<string, TruthMemory>();

const time = (t: Date | string | undefined): number => (t ? new Date(t).getTime() : 0);

/** A member Pod as the judge reads it. */
function podSeen(p: V1Pod): PodSeen {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
  const etcd = p.status?.containerStatuses?.find((c) => c.name === ETCD_CONTAINER);
  const waiting = etcd?.state?.waiting;
  const last = etcd?.lastState?.terminated;
  const note = waiting?.reason
    ? `${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}`
    : last
      ? `last exit ${last.exitCode} ${last.reason ?? ''}`.trim()
      : '';
  return {
    name: p.metadata?.name ?? '',
    uid: p.metadata?.uid ?? '',
    ready: ready?.status === 'True',
    readySince: time(ready?.lastTransitionTime ?? p.metadata?.creationTimestamp),
    restarts: etcd?.restartCount ?? 0,
    note,
  };
}

/** The member (Pod) name of an etcd member: its peer URL's first label (`demo-1.demo.ns.svc`). */
const memberName = (peerURLs: readonly string[]): string => {
  try {
    return new URL(peerURLs[0] ?? '').hostname.split('.')[0] ?? '';
  } catch {
    return '';
  }
};

/** Holds one cluster's Available and Degraded to what etcd and its Pods say. */
export class StatusTruth {
  readonly #core: CoreV1Api;
  readonly #namespace: string;
  readonly #name: string;
  #ips = new Map<string, string>();
  readonly #etcd: EtcdClients;
  #last = { at: 0, claims: '' };

  constructor(core: CoreV1Api, namespace: string, name: string, tls: ClusterTLS) {
    this.#core = core;
    this.#namespace = namespace;
    this.#name = name;
    const scheme = tls.client ? 'https' : 'http';
    this.#etcd = new EtcdClients(
      () => ({
        endpoints: [...this.#ips.values()].map((ip) => `${scheme}://${ip}:2379`),
        clientURL: (member) => `${scheme}://${this.#ips.get(member) ?? '0.0.0.0'}:2379`,
        ...(tls.client ? { tls: tls.client } : {}),
        ...(tls.serverName ? { serverName: () => tls.serverName } : {}),
      }),
      { callTimeoutMs: CALL_MS },
    );
  }

  /**
   * Judges the status of `cluster`, read at `statusAt`, against the world read now; throws
   * UntrueStatus when a claim is false past its allowance.
   */
  async check(cluster: EtcdCluster, statusAt: number): Promise<void> {
    const uid = cluster.metadata.uid ?? '';
    const since = managerSince(this.#namespace);
    const claims = (cluster.status?.conditions ?? [])
      .filter((c) => c.type === 'Available' || c.type === 'Degraded')
      .map((c) => `${c.type}=${c.status}`)
      .join(',');
    // A cluster being deleted takes its members down on purpose: nothing to hold it to.
    if (since === null || cluster.metadata.deletionTimestamp) return;
    if (claims === this.#last.claims && statusAt - this.#last.at < EVERY_MS) return;
    this.#last = { at: statusAt, claims };
    // Clients for this read only: an open gRPC channel would keep a sweep's process alive.
    const world = await this.#world(cluster)
      .catch(() => null) // the Pods not listed: this read is not judged
      .finally(() => this.#etcd.close());
    if (!world) return;
    let memory = memories.get(uid);
    if (!memory) memories.set(uid, (memory = newMemory()));
    judge({
      cluster,
      statusAt,
      world,
      managerSince: since,
      memory,
      tell: (line) => console.log(`${this.#name}: ${line}`),
    });
  }

  async #world(cluster: EtcdCluster): Promise<WorldSeen> {
    const list = await this.#core.listNamespacedPod({
      namespace: this.#namespace,
      labelSelector: `${LABEL.cluster}=${this.#name},${LABEL.member}`,
    });
    const live = list.items.filter((p) => !p.metadata?.deletionTimestamp);
    this.#ips = new Map(
      live.filter((p) => p.status?.podIP).map((p) => [p.metadata?.name ?? '', p.status?.podIP ?? '']),
    );
    const etcd = await this.#etcdSeen(cluster);
    return {
      at: Date.now(),
      etcd,
      pods: live.map(podSeen),
      // Parked at zero on purpose, no member runs: no voter to hold to a Pod.
      votersByStatus: cluster.status?.conditions?.some((c) => c.type === 'Dormant' && c.status === 'True')
        ? []
        : (cluster.status?.members ?? []).filter((m) => m.role === 'voter').map((m) => m.name),
    };
  }

  /** A linearizable member list from the first member that gives one, then each voter's own status call. */
  async #etcdSeen(cluster: EtcdCluster): Promise<EtcdSeen> {
    const ref = { namespace: this.#namespace, name: this.#name, uid: cluster.metadata.uid ?? '' };
    let error = 'no member Pod has an IP';
    for (const name of this.#ips.keys()) {
      try {
        const deadline = Date.now() + CALL_MS;
        const list = await this.#etcd.member(ref, name).cluster.memberList({ linearizable: true }, { deadline });
        const voters = list.members
          .filter((m) => !m.isLearner)
          .map((m) => ({ id: hexID(m.ID), name: memberName(m.peerURLs) }));
        const healthy = await Promise.all(
          voters.map(async (v) => {
            if (!this.#ips.has(v.name)) return null;
            try {
              const s = await this.#etcd.member(ref, v.name).maintenance.status({ deadline: Date.now() + CALL_MS });
              return hexID(s.header.member_id) === v.id ? v.id : null;
            } catch {
              return null;
            }
          }),
        );
        return { answered: true, voters, healthy: healthy.filter((id): id is string => id !== null) };
      } catch (err) {
        error = `${name}: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    return { answered: false, error };
  }
}
