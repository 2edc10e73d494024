/** What a user reads about a roll: which member, where it stands, what it waits for; and Upgraded. */
import type { ClusterContext } from '../../cluster-decide.ts';
import { ConditionReason } from '../../../api/conditions.ts';
import { etcdMemberFor, preUpgradeSnapshotName } from '../../policy.ts';
import { retarget, type ConcernWords } from '../concern.ts';
import {
  DEFAULT_SNAPSHOT_COUNT,
  minorName,
  older,
  outdatedMembers,
  preUpgradeSnapshot,
  versionMoves,
} from './rules.ts';

/** The snapshot a roll takes first: taking it, waiting for it, or what to do once it failed. */
function snapshotMessage(c: ClusterContext, to: string): string {
  const name = preUpgradeSnapshotName(c.cluster.name, to);
  const s = preUpgradeSnapshot(c);
  if (s?.phase === 'Failed')
    return `${rolling(c)} to ${to}: EtcdSnapshot ${name}, taken before any member restarts, failed (${s.message ?? 'see kubectl describe etcdsnapshot'}); no member was restarted. Fix its destination and delete it to take it again, remove spec.upgrade.snapshot to roll without one, or set spec.version back`;
  return s
    ? `${rolling(c)} to ${to}: waiting for EtcdSnapshot ${name} (${s.phase || 'Pending'}) before any member restarts`
    : `${rolling(c)} to ${to}: taking EtcdSnapshot ${name} before any member restarts`;
}

/** The roll goes down: some member is still set to, or still answers with, a newer version than the target. */
const goingDown = (c: ClusterContext): boolean => {
  const to = c.target?.version;
  if (!to) return false;
  const answers = Object.values(c.etcd?.versions ?? {});
  return [...outdatedMembers(c).map((m) => m.version ?? to), ...answers].some((v) => older(to, v));
};

/** A version roll's step and its Upgraded reason, by its direction: Downgrading when it goes down, else Upgrading. */
const direction = (c: ClusterContext): string =>
  goingDown(c) ? ConditionReason.Downgrading : ConditionReason.Upgrading;

/** The roll's step: RollingCA while the member in its step moves no version (new CAs alone), else its direction. */
const rollStep = (c: ClusterContext): string =>
  c.upgrade && !versionMoves(c) ? ConditionReason.RollingCA : direction(c);

/** `downgrading` or `upgrading`, as the roll's version goes: its direction in a sentence. */
const rolling = (c: ClusterContext): string => direction(c).toLowerCase();

/** What a step of a rolling upgrade does: `upgrading demo-1 (2 of 3) to 3.6.16: ...`. */
export function upgradeMessage(sub: string, c: ClusterContext): string {
  const u = c.upgrade;
  if (!u) return `${rolling(c)} to ${c.target?.version ? `etcd ${c.target.version}` : 'the target version'}`;
  const to = c.target?.version ?? 'the target version';
  if (sub.startsWith('snapshotting')) return snapshotMessage(c, to);
  const without =
    u.position === 1 && c.upgradeSnapshotWanted !== true
      ? ' (no snapshot first: spec.upgrade.snapshot is not set)'
      : '';
  // Only the CAs change: the member restarts on the version it runs.
  const caOnly = u.from === to;
  const head = caOnly
    ? `restarting ${u.member} (${u.position} of ${u.total}) to trust the CA certificates now in the cluster's Secrets (ca.crt changed)`
    : `${older(to, u.from) ? 'downgrading' : 'upgrading'} ${u.member} (${u.position} of ${u.total}) from ${u.from} to ${to}${u.newTrust ? ', trusting the CA certificates now in its Secrets' : ''}${without}`;
  // A scale asked meanwhile waits for the roll's last member: said, as observing says it.
  const then = retarget(c);
  if (sub.startsWith('awaitingHealth'))
    return `${head}: waiting until every voter is healthy and in sync before its Pod stops${then}`;
  if (sub.startsWith('enablingDowngrade'))
    return `${head}: enabling etcd's downgrade to ${minorName(to)} and waiting until every member reports cluster version ${minorName(to)} and storage version ${minorName(to)} or older, before any member restarts on it${then}`;
  if (sub.startsWith('abandoningDowngrade'))
    return `${head}: the spec changed before etcd's cluster version came down: cancelling etcd's downgrade to ${minorName(to)} first, so that it does not come down later${then}`;
  if (sub.startsWith('cancellingDowngrade'))
    return `${head}: cancelling etcd's downgrade to ${c.downgradeTo ?? 'the previous minor'} first, so that the cluster version follows the members up again${then}`;
  if (sub.startsWith('flushingLog'))
    return `${head}: committing ${(c.snapshotCount ?? DEFAULT_SNAPSHOT_COUNT) + 1} empty entries so that every member writes its raft log to a snapshot on disk first (etcd ${to} cannot replay entries etcd 3.5 wrote)${then}`;
  if (sub.startsWith('movingLeader') || sub.startsWith('awaitingLeader'))
    return `${head}: moving leadership to another voter before its Pod stops${then}`;
  if (sub.startsWith('settingVersion'))
    return `${head}: setting the EtcdMember's ${caOnly ? 'spec.trust' : 'version'}${then}`;
  return `${head}: waiting for it to restart ${caOnly ? 'with them' : 'on the new version'}, answer and catch up with the leader${then}`;
}

/** The roll's words: its step's message, and Upgraded once etcd answers from every member with the target. */
export const rollWords: ConcernWords = {
  describe: { upgrading: upgradeMessage },
  names: { upgrading: rollStep },
  completes: {
    upgrading: {
      condition: 'Upgraded',
      message: (c) => `every member runs etcd ${c.target?.version ?? ''}`,
      // Each member's EtcdMember is set and etcd answers from it with the version: leaving the
      // step for another (a new spec, a member to replace) or between members is not enough.
      done: (c) =>
        !c.members.some((m) => !m.deleting && m.version !== undefined && m.version !== c.target?.version) &&
        rolled(c).missing.length === 0,
      running: {
        reason: ConditionReason.Upgrading,
        otherReasons: [ConditionReason.Downgrading],
        reasonOf: direction,
        // New CAs alone (the same version) change nothing it says: it stays as it was.
        moves: versionMoves,
        message: (c) => {
          const { runs, missing } = rolled(c);
          const to = c.target?.version ?? 'the target version';
          const waiting = missing.length > 0 ? `; not yet: ${missing.join(', ')}` : '';
          const how = goingDown(c)
            ? `downgrading to etcd ${to} (etcd's downgrade to ${minorName(to)})`
            : `upgrading to etcd ${to}`;
          return `${how}: ${runs.length} of ${runs.length + missing.length} members answer with it${waiting}`;
        },
      },
    },
  },
};

/**
 * The members etcd answers from with the target version, and those it does not (yet): every
 * EtcdMember that stays and every member etcd lists, by name (an unnamed one by its ID).
 */
export function rolled(c: ClusterContext): { runs: string[]; missing: string[] } {
  const version = c.target?.version;
  const etcd = c.etcdError === null ? c.etcd : null;
  const named = c.members
    .filter((m) => !m.deleting)
    .map((m) => ({ name: m.name, id: etcdMemberFor(c.cluster, etcd, m.name)?.id }));
  const known = new Set(named.map((m) => m.id));
  const unnamed = (etcd?.members ?? [])
    .filter((m) => !known.has(m.id))
    .map((m) => ({ name: m.name || m.id, id: m.id }));
  const all = [...named, ...unnamed];
  const answers = (id: string | undefined): boolean =>
    id !== undefined && version !== undefined && etcd?.versions?.[id] === version;
  return {
    runs: all.filter((m) => answers(m.id)).map((m) => m.name),
    missing: all.filter((m) => !answers(m.id)).map((m) => m.name),
  };
}
