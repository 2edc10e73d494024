/**
 * Per-cluster metrics from what the manager already observes, no probe of their own: etcd's answer
 * to the cluster probe (members, health, leader, database sizes, alarms), kept here as it comes,
 * and, read at scrape time, the objects in the informers' caches (the specs users wrote and the
 * statuses the manager wrote). Labels are namespace, cluster and member or schedule: bounded by
 * the objects there are (docs/metrics.md).
 */
import type { EtcdCluster } from '../api/v1alpha1/index.ts';
import { backupFamilies, seconds } from './metrics-backups.ts';
import type { ClusterRef } from '../effects/types.ts';
import { clusterMachine } from '../machines/cluster.ts';
import { ETCD_DEFAULT_QUOTA } from '../machines/cluster/maintenance/rules.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';
import type { EtcdObservation } from '../machines/types.ts';
import { Family, type Labels, type Metric, type ObjectCaches } from './metrics-families.ts';

export type { ObjectCaches } from './metrics-families.ts';
import { maintenanceObserved } from './observe.ts';

/** One etcd member as the last probe saw it. */
interface MemberSeen {
  readonly name: string;
  readonly voter: boolean;
  readonly healthy: boolean;
  readonly leader: boolean;
  readonly size?: { readonly dbSize: number; readonly dbSizeInUse: number };
}

/** A cluster as its last probe saw it; `reachable` false when no member answered (the list is the last known). */
interface ClusterSeen {
  readonly namespace: string;
  readonly cluster: string;
  readonly reachable: boolean;
  readonly members: readonly MemberSeen[];
  readonly alarms: readonly string[];
  readonly leader: string | null;
}

/** The alarms etcd raises; each cluster etcd answered for shows both, 0 or 1. */
const ALARMS = ['NOSPACE', 'CORRUPT'] as const;

/** What the manager knows of each cluster, member, snapshot and schedule, as metric families. */
export class ClusterMetrics {
  readonly #now: () => number;
  #caches: ObjectCaches | undefined;
  readonly #seen = new Map<string, ClusterSeen>();
  readonly #leaderChanges = new Map<string, number>();

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Reads the objects from these caches at scrape time. */
  watch(caches: ObjectCaches): void {
    this.#caches = caches;
  }

  /** Takes a cluster probe's answer, or why there is none (no member answered). */
  probed(ref: ClusterRef, observed: EtcdObservation | string): void {
    const before = this.#seen.get(ref.uid);
    if (typeof observed === 'string') {
      if (before) this.#seen.set(ref.uid, { ...before, reachable: false, leader: null, alarms: before.alarms });
      return;
    }
    const leader = observed.leader ?? null;
    const changes = this.#leaderChanges.get(ref.uid) ?? 0;
    const changed = before?.leader != null && leader !== null && before.leader !== leader;
    this.#leaderChanges.set(ref.uid, changes + (changed ? 1 : 0));
    this.#seen.set(ref.uid, {
      namespace: ref.namespace,
      cluster: ref.name,
      reachable: true,
      leader: leader ?? before?.leader ?? null,
      alarms: [...new Set((observed.alarms ?? []).map((a) => a.alarm))],
      members: observed.members.map((m) => ({
        name: m.name || m.id,
        voter: !m.learner,
        healthy: observed.healthy.includes(m.id),
        leader: m.id === leader,
        ...(observed.sizes?.[m.id] ? { size: observed.sizes[m.id] } : {}),
      })),
    });
  }

  /** Forgets a cluster that is gone. */
  forget(uid: string): void {
    this.#seen.delete(uid);
    this.#leaderChanges.delete(uid);
  }

  /** Every family, each read at scrape time. */
  families(): Metric[] {
    const f = (name: string, help: string, read: () => Iterable<readonly [Labels, number]>, type?: string) =>
      new Family(`etcd_operator_${name}`, help, read, type);
    const clusters = (value: (c: EtcdCluster) => number | undefined) => () =>
      this.#clusters().flatMap((c) => {
        const v = value(c);
        return v === undefined ? [] : [[clusterLabels(c), v] as const];
      });
    const seen = (value: (s: ClusterSeen, uid: string) => number | undefined) => () =>
      this.#probedClusters().flatMap(([uid, s]) => {
        const v = value(s, uid);
        return v === undefined ? [] : [[{ namespace: s.namespace, cluster: s.cluster }, v] as const];
      });
    const members = (value: (m: MemberSeen, s: ClusterSeen) => number | undefined) => () =>
      this.#probedClusters().flatMap(([, s]) =>
        s.members.flatMap((m) => {
          const v = value(m, s);
          return v === undefined ? [] : [[{ namespace: s.namespace, cluster: s.cluster, member: m.name }, v] as const];
        }),
      );
    const voters = (s: ClusterSeen) => s.members.filter((m) => m.voter);
    return [
      f(
        'cluster_members_desired',
        'Voting members the EtcdCluster asks for (spec.replicas).',
        clusters((c) => c.spec.replicas),
      ),
      f(
        'cluster_members_ready',
        'Members that are voters, healthy and ready (status.readyMembers).',
        clusters((c) => c.status?.readyMembers ?? 0),
      ),
      f(
        'cluster_voters',
        "Voting members in etcd's last member list.",
        seen((s) => voters(s).length),
      ),
      f(
        'cluster_learners',
        "Learners in etcd's last member list.",
        seen((s) => s.members.length - voters(s).length),
      ),
      f(
        'cluster_quorum',
        'Voters etcd needs to answer and write: a majority of its voting members.',
        seen((s) => Math.floor(voters(s).length / 2) + 1),
      ),
      f(
        'cluster_healthy_voters',
        'Voting members that answered the last probe (0 when none did).',
        seen((s) => (s.reachable ? voters(s).filter((m) => m.healthy).length : 0)),
      ),
      f(
        'cluster_etcd_reachable',
        'Whether a member answered the last probe (1) or none did (0).',
        seen((s) => Number(s.reachable)),
      ),
      f(
        'cluster_has_leader',
        'Whether the members that answered the last probe name a leader.',
        seen((s) => Number(s.reachable && s.members.some((m) => m.leader))),
      ),
      f(
        'cluster_leader_changes_total',
        'Changes of leader seen between two probes since the manager started.',
        seen((_, uid) => this.#leaderChanges.get(uid)),
        'counter',
      ),
      new Family('etcd_operator_cluster_alarm', "etcd's alarms (NOSPACE, CORRUPT): 1 while raised.", () =>
        this.#probedClusters().flatMap(([, s]) =>
          ALARMS.map(
            (alarm) =>
              [{ namespace: s.namespace, cluster: s.cluster, alarm }, Number(s.alarms.includes(alarm))] as const,
          ),
        ),
      ),
      f(
        'cluster_quota_backend_bytes',
        "etcd's database quota (spec.options.quotaBackendBytes, else etcd's default 2 GiB).",
        clusters((c) => maintenanceObserved(c.spec).quotaBytes ?? ETCD_DEFAULT_QUOTA),
      ),
      new Family(
        'etcd_operator_cluster_step',
        'The step in flight or at rest (status.observed.step): 1 for the current one.',
        () =>
          this.#clusters().flatMap((c) =>
            c.status?.observed?.step ? [[{ ...clusterLabels(c), step: c.status.observed.step }, 1] as const] : [],
          ),
      ),
      f(
        'cluster_step_in_flight',
        'Whether a step is under way (1) or the cluster is at rest (0).',
        clusters((c) => (c.status?.observed?.state ? Number(!resting(c)) : undefined)),
      ),
      f(
        'cluster_step_started_timestamp_seconds',
        'When the current step started.',
        clusters((c) => seconds(c.status?.observed?.stepStartedAt)),
      ),
      f(
        'cluster_progress_deadline_seconds',
        'How long a step may take before Degraded says so (spec.progressDeadlineSeconds).',
        clusters((c) => c.spec.progressDeadlineSeconds),
      ),
      f(
        'member_healthy',
        'Whether the member answered the last probe (1) or not (0).',
        members((m, s) => Number(s.reachable && m.healthy)),
      ),
      f(
        'member_voter',
        'Whether the member votes (1) or is a learner (0).',
        members((m) => Number(m.voter)),
      ),
      f(
        'member_is_leader',
        'Whether the member led at the last probe.',
        members((m, s) => Number(s.reachable && m.leader)),
      ),
      f(
        'member_database_size_bytes',
        "The member's database file: bytes allocated (dbSize).",
        members((m, s) => (s.reachable ? m.size?.dbSize : undefined)),
      ),
      f(
        'member_database_in_use_bytes',
        "Bytes of the member's database holding data (dbSizeInUse); the rest defragmenting gives back.",
        members((m, s) => (s.reachable ? m.size?.dbSizeInUse : undefined)),
      ),
      ...backupFamilies(() => this.#caches, this.#now),
    ];
  }
  #clusters(): readonly EtcdCluster[] {
    return this.#caches?.EtcdCluster.list() ?? [];
  }

  /**
   * The probed clusters still in the cache and asked to run: one deleted meanwhile is left out, and
   * so is one scaled to zero, whose members are stopped on purpose (its last probe says otherwise).
   */
  #probedClusters(): [string, ClusterSeen][] {
    const live = new Set(this.#clusters().flatMap((c) => (c.spec.replicas > 0 ? [c.metadata.uid] : [])));
    return [...this.#seen].filter(([uid]) => live.has(uid));
  }
}

const clusterLabels = (c: EtcdCluster): Labels => ({
  namespace: c.metadata.namespace ?? '',
  cluster: c.metadata.name ?? '',
});

/** Whether the cluster's machine rests (nothing in flight), from the state its status names. */
const resting = (c: EtcdCluster): boolean => pathHasTag(clusterMachine, c.status?.observed?.state ?? '', TAG.resting);
