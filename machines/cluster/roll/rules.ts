/**
 * What the roll knows and decides by: which members run another version than the target or
 * trust other CAs, in the order a roll takes them, and the snapshot a roll takes first.
 * Invariant: while a roll has members to go, the replicas it latched stay (membership changes
 * wait until every member runs one version). Pure: no clock, everything is in the view.
 */
import { etcdMemberFor } from '../../policy.ts';
import type {
  ClusterObjectRef,
  ClusterTarget,
  EtcdObservation,
  MemberObservation,
  PreUpgradeSnapshot,
} from '../../types.ts';
import { MEMBER_STATE } from '../../member-state.ts';

/** The member a step of a rolling upgrade restarts on the new version. */
export interface Upgradee {
  readonly member: string;
  /** Its etcd member ID (hex); empty when etcd does not list it. */
  readonly memberID: string;
  readonly from: string;
  /** It restarts to trust other CAs (a CA changed in the cluster's Secrets); absent: no. */
  readonly newTrust?: boolean;
  /** 1 for the first member of the roll. */
  readonly position: number;
  readonly total: number;
}

/** What the cluster context holds for the roll; every field optional, so older journals read. */
export interface RollContext {
  /** The member the upgrading step moves to the target version, and where it stands in the roll. */
  readonly upgrade?: Upgradee | null;
  /** spec.upgrade.snapshot is set: a roll takes a snapshot first. */
  readonly upgradeSnapshotWanted?: boolean;
  /** The snapshots rolls took first, as listed. */
  readonly preUpgrade?: readonly PreUpgradeSnapshot[];
  /** The version whose roll has its snapshot (or was told to go without): not asked again. */
  readonly preUpgradeDone?: string | null;
  /** The version whose snapshot was seen failed: deleting it asks for a new one. */
  readonly preUpgradeFailed?: string | null;
  /** etcd's --snapshot-count as spec.options sets it (absent: etcd's default, 10,000). */
  readonly snapshotCount?: number;
  /** The version whose roll flushed every member's raft log to a snapshot first: not asked again. */
  readonly logFlushed?: string | null;
  /**
   * The minor etcd's cluster and storage versions were brought down to for a roll down (`3.5`; etcd's
   * downgrade enabled, or found there): not asked again; a roll back above it cancels the downgrade first.
   */
  readonly downgradeTo?: string | null;
}

/** etcd's default --snapshot-count (3.6 and 3.7). */
export const DEFAULT_SNAPSHOT_COUNT = 10_000;

/** Major and minor of an x.y.z version, as one number to compare (3.7 -> 3007). */
const minorOf = (version: string): number => {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major * 1000 + minor;
};

/** `3.6.16` -> `3.6`. */
export const minorName = (version: string): string => version.split('.').slice(0, 2).join('.');

/** A version is older than another (by minor, then patch). */
export const older = (a: string, b: string): boolean => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
};

/**
 * A roll down a minor (members on 3.6, the target 3.5) brings etcd's cluster and storage versions
 * down to the target's minor first (etcd's downgrade), once: a member restarted on the older minor
 * before would find data newer than it runs. Also when the cluster version is there already (an
 * unfinished upgrade undone): the effect then finds nothing to enable.
 */
export const downgradeNeeded = (c: RollView): boolean => {
  const to = c.target?.version;
  if (!to || c.downgradeTo === minorName(to)) return false;
  return outdatedMembers(c).some((m) => m.version !== undefined && minorOf(m.version) > minorOf(to));
};

/**
 * A roll above the minor a downgrade brought the cluster to (the downgrade undone, or a later
 * upgrade) cancels etcd's downgrade first: while it is enabled the cluster version stays down.
 */
export const downgradeCancelNeeded = (c: RollView): boolean => {
  const to = c.target?.version;
  return !!to && !!c.downgradeTo && minorOf(to) > minorOf(c.downgradeTo);
};

/**
 * A roll onto 3.7 or later whose members still run an older minor flushes their raft logs first:
 * etcd 3.7 replays a member's log from its last snapshot on disk, and panics on the entries etcd
 * 3.5 wrote there (a cluster born on 3.5 keeps them until --snapshot-count entries later).
 * Whether a log still holds any is not known from outside, so every such roll flushes, once.
 */
export const logFlushNeeded = (c: RollView): boolean => {
  const to = c.target?.version;
  if (!to || minorOf(to) < minorOf('3.7.0') || c.logFlushed === to) return false;
  return outdatedMembers(c).some((m) => m.version !== undefined && minorOf(m.version) < minorOf(to));
};

/** What the roll reads besides its own fields. */
export interface RollView extends RollContext {
  readonly cluster: ClusterObjectRef;
  readonly spec: ClusterTarget | null;
  readonly target: ClusterTarget | null;
  readonly members: readonly MemberObservation[];
  readonly etcd: EtcdObservation | null;
}

/** The snapshot a roll to the target version takes first, as listed; undefined until it is. */
export const preUpgradeSnapshot = (c: RollView): PreUpgradeSnapshot | undefined =>
  c.preUpgrade?.find((s) => s.version === c.target?.version);

/** The member's EtcdMember names other CAs to trust than the target's (a CA changed in its Secrets). */
export const trustOutdated = (c: RollView, m: MemberObservation): boolean =>
  c.target?.trust !== undefined && m.trust !== c.target.trust;

/**
 * Members whose EtcdMember runs another version than the target, or trusts other CAs, in the order a roll takes
 * them: followers by ordinal, the leader last (so leadership moves once, at the end).
 */
export function outdatedMembers(c: RollView): MemberObservation[] {
  const version = c.target?.version;
  if (!version) return [];
  const leads = (m: MemberObservation): boolean =>
    c.etcd?.leader != null && etcdMemberFor(c.cluster, c.etcd, m.name)?.id === c.etcd.leader;
  return c.members
    .filter((m) => !m.deleting && m.version !== undefined && (m.version !== version || trustOutdated(c, m)))
    .sort((a, b) => Number(leads(a)) - Number(leads(b)) || a.ordinal - b.ordinal);
}

/**
 * The roll moves a version: an EtcdMember is set to, or etcd answers from a member with, another
 * than the target, or the member in its step came from another (etcd has no answer from it while
 * it restarts). False in a roll onto new CAs alone.
 */
export function versionMoves(c: RollView): boolean {
  const other = (v: string | undefined): boolean => v !== undefined && v !== c.target?.version;
  return (
    (c.upgrade != null && other(c.upgrade.from)) ||
    c.members.some((m) => !m.deleting && other(m.version)) ||
    Object.values(c.etcd?.versions ?? {}).some(other)
  );
}

/** The member being upgraded, as the cluster machine last listed it (undefined once it is gone). */
export const upgradee = (c: RollView): MemberObservation | undefined =>
  c.members.find((m) => m.name === c.upgrade?.member && !m.deleting && m.state !== MEMBER_STATE.replacing);

/**
 * The target to latch between two steps, given the spec's `next`: a roll with members to go on
 * both the latched target and the next keeps the replicas it latched, so no member joins or
 * leaves a cluster that runs two versions. A new version (or the old one back) is taken.
 */
export function latchDuringRoll(c: RollView, next: ClusterTarget): ClusterTarget {
  const rolling = outdatedMembers(c).length > 0 && outdatedMembers({ ...c, target: next }).length > 0;
  return rolling && c.target && next.replicas !== c.target.replicas ? { ...next, replicas: c.target.replicas } : next;
}
