/**
 * The etcd probe of each cluster: its member list and health, fed to the cluster machine, and
 * the last answer kept so that members and snapshots read it and are worked again when it
 * changed. Without a usable client certificate nothing is asked: what is wrong with its Secret
 * is what is observed.
 */
import type { Logger } from 'pino';
import type { EtcdCluster } from '../api/v1alpha1/index.ts';
import { probeCluster, type EtcdClients } from '../effects/etcd/index.ts';
import type { ClusterRef } from '../effects/types.ts';
import type { EtcdObservation } from '../machines/index.ts';
import type { Entry, ManagerContext } from './kinds/kind.ts';
import type { ManagerMetrics } from './metrics.ts';
import { memberKey, snapshotKey } from './watches.ts';

/**
 * What a cluster's probe found: nothing asked (no member Pod has an address, or the cluster
 * goes), no answer, no certificate to ask with, or an answer the same as the last one or not.
 */
export type Probed = 'none' | 'unanswered' | 'noCertificate' | 'same' | 'changed';

/** What EtcdProbes needs. */
export interface EtcdProbesOptions {
  readonly etcd: EtcdClients;
  readonly log: Logger;
  readonly metrics: ManagerMetrics;
  readonly now: () => number;
  /** Works a key again (a member or snapshot of a cluster whose probe changed). */
  readonly requeue: (key: string) => void;
  /** The names of a cluster's EtcdMembers and EtcdSnapshots, from the caches. */
  readonly membersOf: (namespace: string, cluster: string) => readonly { metadata: { name?: string } }[];
  readonly snapshotsOf: (namespace: string, cluster: string) => readonly { metadata: { name?: string } }[];
}

/** The last etcd probe per cluster uid (null when no member answered), and the probe. */
export class EtcdProbes {
  readonly #o: EtcdProbesOptions;
  readonly #last = new Map<string, EtcdObservation | null>();

  constructor(options: EtcdProbesOptions) {
    this.#o = options;
  }

  /** The last probe of a cluster: undefined when none was made, null when no member answered. */
  get(uid: string): EtcdObservation | null | undefined {
    return this.#last.get(uid);
  }

  /** Forgets a cluster's last probe and its etcd clients. */
  forget(uid: string): void {
    this.#last.delete(uid);
    this.#o.metrics.clusters.forget(uid);
    this.#o.etcd.forget(uid);
  }

  /** Asks etcd for the member list and health and feeds the answer; members are worked again when it changed. */
  async probe(
    entry: Entry<ManagerContext, 'EtcdCluster'>,
    cluster: EtcdCluster,
    tlsProblem: string | null,
  ): Promise<Probed> {
    const { etcd, metrics, now, requeue } = this.#o;
    const ref = entry.cluster;
    const asked = etcd.endpoints(ref).length > 0;
    // Parked, or no Pod has an address yet: its etcd clients wait for nothing, so they go.
    if (!asked) etcd.forget(ref.uid);
    const observed = await this.#observe(ref, entry.runner.snapshot.context.members.length > 0, tlsProblem);
    if (observed === undefined) return 'none';
    metrics.probes.inc({ result: typeof observed === 'string' ? 'unreachable' : 'answered' });
    metrics.clusters.probed(ref, observed);
    // Stamped once etcd answered: the step it leads to is timed from the answer, not from the question.
    const at = now();
    await entry.runner.feed(
      typeof observed === 'string'
        ? { type: 'etcd.unreachable', at, error: observed }
        : { type: 'etcd.members.listed', at, etcd: observed },
    );
    const previous = this.#last.get(ref.uid);
    // Database sizes move with every write, and no member or snapshot reads them.
    const kept = typeof observed === 'string' ? null : { ...observed, sizes: undefined };
    this.#last.set(ref.uid, kept);
    const same = JSON.stringify(previous) === JSON.stringify(kept);
    if (!same) {
      const name = cluster.metadata.name ?? '';
      for (const m of this.#o.membersOf(ref.namespace, name)) requeue(memberKey(ref.namespace, m.metadata.name ?? ''));
      for (const s of this.#o.snapshotsOf(ref.namespace, name))
        requeue(snapshotKey(ref.namespace, s.metadata.name ?? ''));
    }
    if (kept !== null) return same ? 'same' : 'changed';
    return !asked ? 'none' : tlsProblem ? 'noCertificate' : 'unanswered';
  }

  /** etcd's answer, or why there is none; undefined when there is nothing to ask yet. */
  async #observe(
    ref: ClusterRef,
    hasMembers: boolean,
    tlsProblem: string | null,
  ): Promise<EtcdObservation | string | undefined> {
    const endpoints = this.#o.etcd.endpoints(ref);
    // Dormant, or no Pod has an address yet: nothing to ask, and nothing is healthy.
    if (endpoints.length === 0) return hasMembers ? 'no member Pod runs' : undefined;
    if (tlsProblem) return `the operator has no client certificate to call etcd with: ${tlsProblem}`;
    try {
      return await probeCluster(this.#o.etcd, ref, AbortSignal.timeout(10_000));
    } catch (err) {
      this.#o.log.info(
        { cluster: `${ref.namespace}/${ref.name}`, err: err instanceof Error ? err.message : String(err) },
        'etcd probe: no member answered',
      );
      return `none of ${endpoints.length} member${endpoints.length === 1 ? '' : 's'} answered the member list`;
    }
  }
}
