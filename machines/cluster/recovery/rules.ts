/**
 * What the cluster machine knows and decides about a recovery from a quorum lost for good
 * (spec.recovery, docs/recovery.md): whether one is asked, whether it is refused, which member
 * survives, and when each of its steps is done. Invariants: each requestID is acted on once;
 * nothing changes while a quorum answers, when no member answers, or when the member the user
 * named is not the most advanced; the survivor is the answering member with the highest raft
 * applied index, so no answering member holds a write the recovered cluster lacks.
 * Pure: no clock, everything is in the view.
 */
import { ConditionReason } from '../../../api/conditions.ts';
import { MEMBER_STATE } from '../../member-state.ts';
import { etcdMemberFor, quorum } from '../../policy.ts';
import type { ClusterObjectRef, EtcdObservation, MemberObservation, RecoveryRequest } from '../../types.ts';

/** The EtcdSnapshot a recovery from a snapshot restores, as resolveRecoverySnapshot found it. */
export interface RecoverySnapshot {
  readonly name: string;
  /** The EtcdCluster its clusterRef names. */
  readonly cluster: string;
  /** The etcd revision it holds (status.revision). */
  readonly revision: number;
  /** Where it is stored: s3://... or pvc://... */
  readonly location: string;
  /** When it was stored (status.completionTime), RFC 3339. */
  readonly completionTime: string;
}

/**
 * The recovery in flight: its request, the survivor and where its data stood, and the members it
 * replaces. From a snapshot: no survivor (its fields empty), every member is replaced by a seed
 * restored from the snapshot.
 */
export interface Recovery {
  readonly requestID: string;
  /** Absent: from the survivor (journals written before recovery from a snapshot). */
  readonly from?: 'survivor' | 'snapshot';
  /** from snapshot: the snapshot, once resolved; null until then. */
  readonly snapshot?: RecoverySnapshot | null;
  /** from snapshot: the new member restored from it, once chosen. */
  readonly seed?: { readonly member: string; readonly ordinal: number } | null;
  /** from snapshot: why the seed cannot restore (its Stuck condition, SnapshotUnreadable); absent: it can, as far as known. */
  readonly seedFailure?: string | null;
  /** from snapshot: a cluster whose quorum answered, rolled back (spec.recovery.rollback). */
  readonly rollback?: boolean;
  /**
   * from snapshot: the highest revision a member that answered reported when it was asked (a
   * rollback: the revision read from the cluster); null: none answered (not read yet).
   */
  readonly lastKnownRevision?: number | null;
  readonly survivor: string;
  /** The survivor's etcd member ID (hex). */
  readonly survivorID: string;
  /** The survivor's raft applied index and revision when it was chosen. */
  readonly applied: number;
  readonly revision: number;
  /** The other EtcdMembers, stopped first and deleted once the survivor runs alone. */
  readonly lost: readonly string[];
  /** Those of `lost` deleted, and the one being deleted now. */
  readonly deleted: readonly string[];
  readonly deleting: string | null;
}

/** How the last request ended: recovered, or refused with nothing changed. */
export interface RecoveryOutcome {
  readonly requestID: string;
  readonly result: 'recovered' | 'refused';
  readonly message: string;
  readonly at: number;
  /** Refused after it started: the members it had stopped, started again (absent: nothing was changed). */
  readonly restarted?: readonly string[];
}

/** What the cluster context holds for recovery; every field optional, so older journals read. */
export interface RecoveryContext {
  /** spec.recovery as last observed; null or absent: none asked. */
  readonly recoveryAsked?: RecoveryRequest | null;
  readonly recovery?: Recovery | null;
  readonly recovered?: RecoveryOutcome | null;
  /** The requestIDs judged last (refused or started), newest last: none is judged twice. */
  readonly judged?: readonly string[];
  /** A refused recovery's stopped members are being started again: no request is judged meanwhile. */
  readonly restarting?: boolean;
  /**
   * The EtcdSnapshot this cluster's finalizer holds (or is being put on or taken off): set before
   * holdSnapshot is asked, cleared once releaseSnapshotHold is done; null or absent: none.
   */
  readonly holding?: string | null;
}

/** What the recovery rules read besides their own fields. */
export interface RecoveryView extends RecoveryContext {
  readonly cluster: ClusterObjectRef;
  readonly members: readonly MemberObservation[];
  readonly etcd: EtcdObservation | null;
  readonly etcdError: string | null;
  readonly etcdStale: boolean;
  /** The EtcdCluster is being deleted: nothing is recovered. */
  readonly deleting: boolean;
  /** The EtcdMembers were listed: a request is never judged on a machine that has not seen them. */
  readonly membersSeen: boolean;
}

/** A request not acted on yet: neither in flight nor ended. */
export const recoveryPending = (c: RecoveryView): boolean => {
  const id = c.recoveryAsked?.requestID;
  return id !== undefined && !(c.judged ?? []).includes(id);
};

/** How many judged requestIDs are kept: a spec goes back to an older one only by hand, and rarely. */
const JUDGED_KEPT = 8;

/** `judged` with `requestID` added, the oldest dropped past JUDGED_KEPT. */
const judgedAnd = (c: RecoveryContext, requestID: string): string[] =>
  [...(c.judged ?? []), requestID].slice(-JUDGED_KEPT);

/** `judged` with the asked requestID added. */
export const judgedWith = (c: RecoveryView): string[] => judgedAnd(c, c.recoveryAsked?.requestID ?? '');

/**
 * `judged` with the requestID the EtcdCluster's status says was handled (status.recovery), when
 * the machine does not know it: one that lost its journal and its resume annotation then does not
 * judge it again, and the Recovered condition keeps what it said.
 */
export const judgedFromStatus = (c: RecoveryContext, handled: string | undefined): { judged?: string[] } =>
  handled === undefined || (c.judged ?? []).includes(handled) ? {} : { judged: judgedAnd(c, handled) };

/** An answering member as a candidate survivor: its EtcdMember name, etcd ID, applied index and revision. */
export interface Candidate {
  readonly member: string;
  readonly id: string;
  readonly applied: number;
  readonly revision: number;
}

/**
 * The members that answer, most advanced first (highest applied index, then revision, then the
 * lowest ordinal): each a live EtcdMember that etcd lists as a voter and that reported its progress.
 */
export function candidates(c: RecoveryView): Candidate[] {
  const progress = c.etcd?.progress ?? {};
  return c.members
    .filter((m) => !m.deleting)
    .flatMap((m) => {
      const info = etcdMemberFor(c.cluster, c.etcd, m.name);
      const p = info && !info.learner ? progress[info.id] : undefined;
      return info && p ? [{ member: m.name, id: info.id, ...p, ordinal: m.ordinal }] : [];
    })
    .sort((a, b) => b.applied - a.applied || b.revision - a.revision || a.ordinal - b.ordinal)
    .map(({ ordinal: _, ...rest }) => rest);
}

/** Voters etcd lists, and how many of them answer. */
const voterHealth = (c: RecoveryView): { voters: number; healthy: number } => {
  const voters = (c.etcd?.members ?? []).filter((m) => !m.learner);
  const healthy = c.etcdError ? 0 : voters.filter((v) => c.etcd?.healthy.includes(v.id)).length;
  return { voters: voters.length, healthy };
};

/** Why the pending request is refused, or null when it can go ahead (the survivor is then `candidates(c)[0]`). */
export function refusal(c: RecoveryView): string | null {
  const asked = c.recoveryAsked;
  if (!asked) return 'no recovery is asked';
  if (c.recovery && c.recovery.requestID !== asked.requestID)
    return `recovery ${c.recovery.requestID} is running (from ${c.recovery.from === 'snapshot' ? `EtcdSnapshot ${c.recovery.snapshot?.name ?? ''}` : c.recovery.survivor}): one at a time; ask again once it ended if the cluster still needs it`;
  const { voters, healthy } = voterHealth(c);
  if (voters > 0 && healthy >= quorum(voters)) {
    if (asked.from === 'snapshot' && asked.rollback === true) return null;
    const hint =
      asked.from === 'snapshot'
        ? '; to roll a healthy cluster back to a snapshot, losing every write after it, set rollback: true with snapshotName'
        : '';
    return `a quorum answers (${healthy} of ${voters} voters healthy): recovery is for a quorum lost for good, and would drop members that hold data${hint}`;
  }
  // From a snapshot no member needs to answer; the snapshot is judged once it is found (snapshotRefusal).
  if (asked.from === 'snapshot') return null;
  const ranked = candidates(c);
  const best = ranked[0];
  if (!best)
    return c.etcdError
      ? `no member answers (${c.etcdError}): there is no survivor to recover from`
      : 'no member reports its raft progress: there is no survivor to recover from';
  if (asked.member !== undefined) {
    const named = ranked.find((r) => r.member === asked.member);
    if (!named) return `member ${asked.member} does not answer; members that do: ${describeRanked(ranked)}`;
    if (named.applied < best.applied)
      return `member ${asked.member} is not the most advanced: it applied the raft log to index ${named.applied} (revision ${named.revision}), ${best.member} to ${best.applied} (revision ${best.revision}); recovering from ${asked.member} would lose what ${best.member} has beyond it`;
  }
  return null;
}

/** `demo-0 (applied index 120, revision 57), demo-2 (...)`. */
export const describeRanked = (ranked: readonly Candidate[]): string =>
  ranked.map((r) => `${r.member} (applied index ${r.applied}, revision ${r.revision})`).join(', ');

/** The recovery the request starts: the named survivor (when it is as advanced as any) or the most advanced. */
export function chosen(c: RecoveryView): Recovery | null {
  const asked = c.recoveryAsked;
  const ranked = candidates(c);
  const pick = ranked.find((r) => r.member === asked?.member) ?? ranked[0];
  if (!asked || !pick) return null;
  return {
    requestID: asked.requestID,
    survivor: pick.member,
    survivorID: pick.id,
    applied: pick.applied,
    revision: pick.revision,
    lost: c.members.filter((m) => !m.deleting && m.name !== pick.member).map((m) => m.name),
    deleted: [],
    deleting: null,
  };
}

/** The lost members still listed: the ones to stop (made dormant, so no Pod of theirs runs while the survivor is forced). */
export const lostListed = (c: RecoveryView): string[] =>
  (c.recovery?.lost ?? []).filter((n) => c.members.some((m) => m.name === n));

/** The members a refused recovery had stopped, still listed: to start again. */
export const stoppedListed = (c: RecoveryView): string[] =>
  (c.recovered?.restarted ?? []).filter((n) => c.members.some((m) => m.name === n && !m.deleting));

/** Every member a refused recovery had stopped is asked to run again, and its machine took it up. */
export const stoppedRestarted = (c: RecoveryView): boolean =>
  stoppedListed(c).every((n) => c.members.some((m) => m.name === n && !m.dormant && m.state !== MEMBER_STATE.dormant));

/** Every lost member's Pod is gone, or cannot run (its node is lost). */
export const lostStopped = (c: RecoveryView): boolean =>
  (c.recovery?.lost ?? []).every((n) => {
    const m = c.members.find((x) => x.name === n);
    return !m || m.pod === undefined || m.state === MEMBER_STATE.nodeLost;
  });

/** etcd lists the survivor alone, answering and leading: --force-new-cluster took. */
export const survivorAlone = (c: RecoveryView): boolean => {
  const id = c.recovery?.survivorID;
  const e = c.etcd;
  return (
    !c.etcdStale &&
    c.etcdError === null &&
    e !== null &&
    e.members.length === 1 &&
    e.members[0]?.id === id &&
    id !== undefined &&
    e.healthy.includes(id) &&
    e.leader === id
  );
};

/**
 * The survivor's Pod started with --force-new-cluster for this request, and etcd lists it alone:
 * the flag took. Both are asked, so a members list from before the force is never taken for after.
 */
export const survivorForced = (c: RecoveryView): boolean => {
  const m = c.members.find((x) => x.name === c.recovery?.survivor);
  return m?.pod?.forceNewCluster === c.recovery?.requestID && survivorAlone(c);
};

/** The survivor runs again in a Pod started plainly, a voter, answering alone: the flag acted once. */
export const survivorPlain = (c: RecoveryView): boolean => {
  const m = c.members.find((x) => x.name === c.recovery?.survivor);
  return (
    m?.pod?.forceNewCluster === '' &&
    m.forceNewCluster === undefined &&
    m.state === MEMBER_STATE.voter &&
    survivorAlone(c)
  );
};

/** The next lost member to delete, once the survivor runs alone (its finalizer then finds it out of etcd). */
export const nextToDelete = (c: RecoveryView): string | undefined =>
  lostListed(c).find((n) => !c.recovery?.deleted.includes(n));

/** Every lost EtcdMember is gone. */
export const lostGone = (c: RecoveryView): boolean =>
  (c.recovery?.lost ?? []).every((n) => !c.members.some((m) => m.name === n));

/** The request restores a snapshot. */
export const fromSnapshot = (c: RecoveryView): boolean =>
  c.recovery ? c.recovery.from === 'snapshot' : c.recoveryAsked?.from === 'snapshot';

/**
 * The recovery a request from a snapshot starts: every member is replaced, the snapshot is found
 * next; the cluster's last known revision is the highest a member that answers reports.
 */
export function chosenSnapshotRecovery(c: RecoveryView): Recovery | null {
  const asked = c.recoveryAsked;
  if (!asked) return null;
  const best = candidates(c)[0];
  return {
    requestID: asked.requestID,
    from: 'snapshot',
    ...(asked.rollback === true ? { rollback: true } : {}),
    snapshot: null,
    seed: null,
    lastKnownRevision: best ? best.revision : null,
    survivor: '',
    survivorID: '',
    applied: 0,
    revision: 0,
    lost: c.members.filter((m) => !m.deleting).map((m) => m.name),
    deleted: [],
    deleting: null,
  };
}

/** Why the snapshot found cannot be restored here (another cluster's, not allowed), or null. */
export function snapshotRefusal(c: RecoveryView): string | null {
  const s = c.recovery?.snapshot;
  if (!s) return 'no snapshot was found';
  if (s.cluster !== c.cluster.name && c.recoveryAsked?.allowOtherCluster !== true)
    return `EtcdSnapshot ${s.name} is of EtcdCluster ${s.cluster}, not ${c.cluster.name}: restoring it would replace ${c.cluster.name}'s data with ${s.cluster}'s; set spec.recovery.allowOtherCluster to true if that is meant`;
  return null;
}

/**
 * etcd lists the seed restored from the snapshot alone, answering and leading: the restored
 * cluster runs. The old members are stopped, so nothing else can answer at these addresses.
 */
export const seedRestored = (c: RecoveryView): boolean => {
  const seed = c.recovery?.seed;
  const e = c.etcd;
  if (!seed || c.etcdStale || c.etcdError !== null || !e || e.members.length !== 1) return false;
  const info = etcdMemberFor(c.cluster, e, seed.member);
  return info !== undefined && info.name !== '' && e.healthy.includes(info.id) && e.leader === info.id;
};

/**
 * The seed cannot restore, and no retry would change it: its restore init container found the
 * snapshot's stored object missing or not what was stored (its Stuck condition, SnapshotUnreadable).
 */
export const seedUnrestorable = (c: RecoveryView): MemberObservation | undefined =>
  c.members.find(
    (m) =>
      m.name === c.recovery?.seed?.member && !m.deleting && m.trouble?.reason === ConditionReason.SnapshotUnreadable,
  );

/** The seed's EtcdMember is gone (or was never made). */
export const seedGone = (c: RecoveryView): boolean => !c.members.some((m) => m.name === c.recovery?.seed?.member);
