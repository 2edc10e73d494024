/**
 * The cluster machine's context and its one decision: given what is observed, which step
 * comes next. `deciding` and every resting state ask the same function, so they cannot
 * disagree (and cannot loop between each other).
 */
import type { BootstrapContext } from './cluster/bootstrap/index.ts';
import { defragDecision, spaceDecision, type MaintenanceContext } from './cluster/maintenance/index.ts';
import { volumesDecision, type VolumesContext } from './cluster/volumes/index.ts';
import { recoveryPending, type RecoveryContext } from './cluster/recovery/index.ts';
import { outdatedMembers, type RollContext } from './cluster/roll/rules.ts';
import { NO_STEP, type StepBookkeeping } from './kit.ts';
import {
  budgetMinAvailable,
  canRemove,
  etcdMemberFor,
  orphans,
  peerURL,
  pickVictim,
  quorum,
  voters,
} from './policy.ts';
import type {
  ClusterObjectRef,
  ClusterTarget,
  EtcdMemberInfo,
  EtcdObservation,
  JobObservation,
  MemberObservation,
} from './types.ts';
import { MEMBER_STATE } from './member-state.ts';

/** The member being added, from the moment its name is chosen until it is a voter. */
export interface Joiner {
  readonly member: string;
  readonly ordinal: number;
  readonly bootstrap: boolean;
  readonly memberID: string | null;
  readonly initialCluster: string | null;
}

/** Everything the cluster machine knows. Plain JSON: journaled with every step. */
export interface ClusterContext
  extends StepBookkeeping, MaintenanceContext, VolumesContext, RollContext, BootstrapContext, RecoveryContext {
  readonly cluster: ClusterObjectRef;
  /** The latest spec observed. */
  readonly spec: ClusterTarget | null;
  /** The target latched when the current run of steps began; spec edits wait for it. */
  readonly target: ClusterTarget | null;
  readonly progressDeadlineSeconds: number;
  readonly deleting: boolean;
  readonly members: readonly MemberObservation[];
  /**
   * The EtcdMembers were listed at least once. Nothing is decided before: a machine that starts
   * without its journal must see a running cluster's members, or it would seed a second one.
   */
  readonly membersSeen: boolean;
  /** Names of the EtcdMembers this machine created and has not yet seen go. */
  readonly memberNames: readonly string[];
  readonly etcd: EtcdObservation | null;
  /** Set when a membership change ends: decisions wait for etcd's member list after it. */
  readonly etcdStale: boolean;
  readonly etcdError: string | null;
  readonly clusterID: string | null;
  /** The first time the target was reached; until then growth is reported as bootstrapping. */
  readonly bootstrapped: boolean;
  readonly nextOrdinal: number;
  readonly joining: Joiner | null;
  readonly leaving: { readonly member: string; readonly peerURL: string } | null;
  readonly orphan: EtcdMemberInfo | null;
  /** A cluster started from a snapshot: the Job that checks it, and whether it passed. Absent: starts empty. */
  readonly restore?: {
    readonly job?: JobObservation | null;
    readonly verified: boolean;
    /** Where the snapshot is, once the Job was made. */
    readonly location?: string;
    /** The EtcdSnapshot it starts from (spec.bootstrap.restore.snapshotName); absent: a source given directly. */
    readonly snapshot?: string;
    /** That EtcdSnapshot is held (this cluster's finalizer on it) until the seed runs. */
    readonly held?: boolean;
  };
  /** spec.tls names an issuer: the seed waits for the cert-manager Certificates the operator makes. */
  readonly certificatesWanted?: boolean;
  /** spec.auth.enabled (fixed at creation). */
  readonly authWanted?: boolean;
  /** enableAuth succeeded: etcd's authentication is on. Absent: not known (a new machine asks again; it is idempotent). */
  readonly authEnabled?: boolean;
  /**
   * The minAvailable of the cluster's PodDisruptionBudget as last set; null: it has none.
   * Absent: not known (a new machine, or a journal from before budgets), so it is set once.
   */
  readonly disruptionBudget?: number | null;
  /**
   * Since when a live voter has not answered healthy (or etcd not at all); null while every one
   * does. Absent: not tracked yet (a journal from before it). Status reads it against a grace.
   */
  readonly unwellSince?: number | null;
}

/** The context of a cluster the machine has not heard about yet. */
export const initialClusterContext = (cluster: ClusterObjectRef): ClusterContext => ({
  cluster,
  spec: null,
  target: null,
  progressDeadlineSeconds: 600,
  deleting: false,
  members: [],
  membersSeen: false,
  memberNames: [],
  etcd: null,
  etcdStale: false,
  etcdError: null,
  clusterID: null,
  bootstrapped: false,
  nextOrdinal: 0,
  joining: null,
  leaving: null,
  orphan: null,
  ...NO_STEP,
});

/** The steps `decide` can choose. */
export const DECISIONS = [
  'deleting',
  'dormant',
  'parking',
  'waking',
  'seeding',
  'observing',
  'removingOrphan',
  'enablingAuth',
  'replacing',
  'updatingBudget',
  'bootstrapping',
  'scalingUp',
  'scalingDown',
  'degraded',
  'recoveringSpace',
  'outOfSpace',
  'resizingVolumes',
  'upgrading',
  'defragmenting',
  'volumesRefused',
  'recovering',
  'steady',
] as const;
/** One of DECISIONS. */
export type Decision = (typeof DECISIONS)[number];

/** etcd's member list is known and not stale (a membership change ends by marking it stale). */
export const etcdFresh = (c: ClusterContext): boolean => !c.etcdStale && c.etcd !== null;

/** Member names the machine accounts for: the EtcdMembers seen plus those it created. */
const accountedFor = (c: ClusterContext): MemberObservation[] => {
  const seen = new Set(c.members.map((m) => m.name));
  const created: MemberObservation[] = c.memberNames
    .filter((n) => !seen.has(n))
    .map((name) => ({
      name,
      ordinal: -1,
      bootstrap: false,
      dormant: false,
      state: MEMBER_STATE.pending,
      deleting: false,
    }));
  return [...c.members, ...created];
};

/** Voting members that belong to a live EtcdMember. */
export const liveVoters = (c: ClusterContext): EtcdMemberInfo[] => voters(c.cluster, accountedFor(c), c.etcd);

/** Every voter etcd lists, with an EtcdMember or not: what its quorum is counted over. */
export const etcdVoters = (c: ClusterContext): EtcdMemberInfo[] => (c.etcd?.members ?? []).filter((m) => !m.learner);

/** Live voters etcd does not report healthy (all of them while etcd does not answer). */
export const unhealthyVoters = (c: ClusterContext): EtcdMemberInfo[] =>
  c.etcd ? liveVoters(c).filter((v) => c.etcdError !== null || !c.etcd?.healthy.includes(v.id)) : [];

/** The next `unwellSince` once `c` is what is observed at `at`: kept while unwell, null once well. */
export function unwellSince(c: ClusterContext, at: number): number | null {
  const unwell = c.etcdError !== null || unhealthyVoters(c).length > 0;
  return unwell ? (c.unwellSince ?? at) : null;
}

/** etcd members no EtcdMember accounts for. */
export const orphanMembers = (c: ClusterContext): EtcdMemberInfo[] =>
  orphans(c.cluster, accountedFor(c), c.etcd, c.joining?.member ?? null);

/** Whether the member's data is gone, or its node, so that it waits to be replaced. */
const isLost = (m: MemberObservation): boolean =>
  (m.state === MEMBER_STATE.replacing || m.state === MEMBER_STATE.nodeLost) && !m.deleting;

/** A member whose data is gone, or whose node is down, and waits to be replaced. */
export const lostMember = (c: ClusterContext): MemberObservation | undefined => c.members.find(isLost);

/**
 * The member being added is lost (its node went before it started or caught up): it never
 * becomes a voter, so the join ends and the member is replaced as any lost member is.
 */
export const joinerLost = (c: ClusterContext): boolean =>
  c.joining !== null && c.members.some((m) => m.name === c.joining?.member && isLost(m));

/** The member scaling down would remove, and its peer URL. */
export function victim(c: ClusterContext): { member: string; peerURL: string } | null {
  const name = pickVictim(c.cluster, c.members, c.etcd);
  return name ? { member: name, peerURL: peerURL(c.cluster, name) } : null;
}

/**
 * The spec observed asks for another target than the one latched: replicas, version, or the CAs
 * to trust (a digest not yet read leaves the latched one).
 */
export const retargeted = (c: ClusterContext): boolean =>
  c.spec !== null &&
  (c.spec.replicas !== c.target?.replicas ||
    c.spec.version !== c.target.version ||
    (c.spec.trust !== undefined && c.spec.trust !== c.target.trust));

const removable = (c: ClusterContext, member: string | undefined): boolean =>
  member !== undefined && canRemove(c.etcd, etcdMemberFor(c.cluster, c.etcd, member));

/**
 * The PodDisruptionBudget's minAvailable the cluster wants now; null for none (scaled to zero).
 * It is for the larger of the voters there are and the voters wanted: raised before a scale-up,
 * lowered once each member of a scale-down has left, so no eviction takes quorum meanwhile.
 */
export function wantedBudget(c: ClusterContext): number | null {
  if (!c.target || c.target.replicas === 0) return null;
  return budgetMinAvailable(Math.max(liveVoters(c).length, c.target.replicas));
}

/** Which step comes next. */
export function decide(c: ClusterContext): Decision {
  if (c.deleting) return 'deleting';
  const target = c.target;
  const active = c.members.filter((m) => !m.deleting);
  if (!target) return 'steady';
  if (target.replicas === 0) {
    if (!active.every((m) => m.state === MEMBER_STATE.dormant)) return 'parking';
    // Parked, nothing runs to protect: a budget over no Pods would read as one that blocks.
    return c.disruptionBudget === null ? 'dormant' : 'updatingBudget';
  }
  if (active.length > 0 && active.every((m) => m.dormant)) return 'waking';
  if (active.length === 0 && c.clusterID === null) return 'seeding';
  if (c.etcdStale || c.etcd === null) return 'observing';
  // Asked for by the user, and judged before anything else: refused at once when a quorum answers.
  if (recoveryPending(c)) return 'recovering';
  // Another cluster answers at these addresses: act on nothing, report it.
  if (c.clusterID !== null && c.etcd.clusterID !== c.clusterID) return 'degraded';
  if (orphanMembers(c).length > 0) return 'removingOrphan';
  // Auth goes on once, as soon as a quorum answers: at bootstrap, right after the seed started.
  if (c.authWanted === true && c.authEnabled !== true && c.etcdError === null) {
    if (c.etcd.healthy.length >= quorum(liveVoters(c).length)) return 'enablingAuth';
  }
  const lost = lostMember(c);
  if (lost && removable(c, lost.name)) return 'replacing';
  // Only once the target was first reached: a bootstrap sets the budget once, at its end.
  if (c.bootstrapped && wantedBudget(c) !== c.disruptionBudget) return 'updatingBudget';
  const count = liveVoters(c).length;
  if (count < target.replicas) return c.bootstrapped ? 'scalingUp' : 'bootstrapping';
  if (count > target.replicas && removable(c, victim(c)?.member)) return 'scalingDown';
  const healthy = c.etcd.healthy.length;
  if (c.etcdError !== null || healthy < quorum(count)) return 'degraded';
  // Writes are refused cluster-wide: before a roll, which can wait (cluster-maintenance.ts).
  const space = spaceDecision(c);
  if (space) return space;
  // Growing volumes restarts nothing: before a roll. A refused one only reports, after the rest.
  const volumes = volumesDecision(c);
  if (volumes === 'resizingVolumes') return volumes;
  if (outdatedMembers(c).length > 0) return 'upgrading';
  if (defragDecision(c)) return 'defragmenting';
  return volumes ?? 'steady';
}
