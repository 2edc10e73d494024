/**
 * The recovery's steps by name: its guards, what it writes into the context, and the parameters
 * of its intents (setDormant for the lost members, setForceNewCluster for the survivor, or
 * resolveRecoverySnapshot and createMember for a seed restored from a snapshot, then
 * deleteMember for each lost one, one at a time).
 */
import { failureOf } from '../../kit.ts';
import { memberName, seedInitialCluster } from '../../policy.ts';
import type {
  ClusterEvent,
  ClusterTarget,
  CreateMemberParams,
  MemberParams,
  ReadRevisionParams,
  ResolveRecoverySnapshotParams,
  SetDormantParams,
  SetForceNewClusterParams,
  SnapshotHoldParams,
} from '../../types.ts';
import { recoveredMessage, seedAbandonedMessage, seedUnrestorableMessage } from './describe.ts';
import {
  chosen,
  chosenSnapshotRecovery,
  fromSnapshot,
  seedGone,
  seedRestored,
  seedUnrestorable,
  snapshotRefusal,
  stoppedListed,
  stoppedRestarted,
  type RecoverySnapshot,
  judgedWith,
  lostGone,
  lostListed,
  lostStopped,
  nextToDelete,
  recoveryPending,
  refusal,
  survivorForced,
  survivorPlain,
  type RecoveryContext,
  type RecoveryView,
} from './rules.ts';

type Ctx = { context: RecoveryView };

/** What the seed's parameters read besides the recovery's view. */
interface SeedView extends RecoveryView {
  readonly nextOrdinal: number;
  readonly spec: ClusterTarget | null;
  readonly target: ClusterTarget | null;
  readonly memberNames: readonly string[];
}

/** A request not judged yet, with the members listed, etcd's answer fresh and the cluster not going. */
const judgeable = (c: RecoveryView): boolean =>
  recoveryPending(c) && c.membersSeen && !c.deleting && !c.etcdStale && c.etcd !== null && c.restarting !== true;

/** Guards of the recovery, by name. */
export const recoveryGuards = {
  recoveryRefused: ({ context: c }: Ctx) => refusal(c) !== null,
  // Judged from any step, on a fresh answer from etcd: one that would go ahead interrupts the
  // step (stuck anyway without a quorum); one refused is said at once and the step goes on.
  recoveryInterrupts: ({ context: c }: Ctx) => judgeable(c) && refusal(c) === null,
  recoveryRefusedNow: ({ context: c }: Ctx) => judgeable(c) && refusal(c) !== null,
  lostStopped: ({ context: c }: Ctx) => lostStopped(c),
  survivorForced: ({ context: c }: Ctx) => survivorForced(c),
  survivorPlain: ({ context: c }: Ctx) => survivorPlain(c),
  lostToDelete: ({ context: c }: Ctx) => nextToDelete(c) !== undefined,
  lostGone: ({ context: c }: Ctx) => lostGone(c),
  fromSnapshot: ({ context: c }: Ctx) => fromSnapshot(c),
  snapshotRefused: ({ context: c }: Ctx) => snapshotRefusal(c) !== null,
  // Every Pod stopped, and the data to come from a snapshot: the seed is next, not a force.
  stoppedForSeed: ({ context: c }: Ctx) => fromSnapshot(c) && lostStopped(c),
  seedRestored: ({ context: c }: Ctx) => seedRestored(c),
  seedUnrestorable: ({ context: c }: Ctx) => seedUnrestorable(c) !== undefined,
  seedGone: ({ context: c }: Ctx) => seedGone(c),
  snapshotHeld: ({ context: c }: Ctx) => (c.holding ?? null) !== null,
  restartingAfterRefusal: ({ context: c }: Ctx) => c.restarting === true,
  rollingBack: ({ context: c }: Ctx) => c.recovery?.rollback === true,
  stoppedRestarted: ({ context: c }: Ctx) => stoppedRestarted(c),
};

type RecoveryUpdate = (
  c: SeedView & { readonly now: number },
  e: ClusterEvent,
) => Partial<RecoveryContext> & {
  readonly etcdStale?: boolean;
  readonly nextOrdinal?: number;
  readonly memberNames?: readonly string[];
  readonly clusterID?: string | null;
  readonly authEnabled?: undefined;
};

/** A refusal said once, with why, and not acted on again; nothing was changed but stopping `restarted`, started again. */
const refused = (
  c: SeedView & { readonly now: number },
  message: string,
  restarted?: readonly string[],
): Partial<RecoveryContext> => ({
  recovery: null,
  recovered: {
    requestID: c.recovery?.requestID ?? c.recoveryAsked?.requestID ?? '',
    result: 'refused',
    message,
    at: c.now,
    ...(restarted ? { restarted } : {}),
  },
});

/** The snapshot resolveRecoverySnapshot reported, if its result is one. */
function snapshotOf(e: ClusterEvent): RecoverySnapshot | null {
  const r = 'result' in e ? (e.result as Partial<RecoverySnapshot> | undefined) : undefined;
  if (!r || typeof r.name !== 'string' || typeof r.cluster !== 'string') return null;
  return {
    name: r.name,
    cluster: r.cluster,
    revision: Number(r.revision ?? 0),
    location: String(r.location ?? ''),
    completionTime: String(r.completionTime ?? ''),
  };
}

/** Context updates of the recovery, by name. */
export const recoveryUpdates = {
  // The request is refused: said once, with why, and not acted on again.
  refuseRecovery: (c) => ({
    recovered: { requestID: c.recoveryAsked?.requestID ?? '', result: 'refused', message: refusal(c) ?? '', at: c.now },
    judged: judgedWith(c),
  }),
  chooseSurvivor: (c) => ({ recovery: chosen(c), judged: judgedWith(c) }),
  chooseSnapshotRecovery: (c) => ({ recovery: chosenSnapshotRecovery(c), judged: judgedWith(c) }),
  recordSnapshot: (c, e) => (c.recovery ? { recovery: { ...c.recovery, snapshot: snapshotOf(e) } } : {}),
  // No snapshot may be restored (none found, not Succeeded, failed its verification): the handler says why.
  refuseSnapshotMissing: (c, e) => refused(c, failureOf(e)?.message ?? 'no snapshot may be restored'),
  refuseSnapshot: (c) => refused(c, snapshotRefusal(c) ?? ''),
  // Asked for in the same journaled step as holdSnapshot: a crash after it landed still lets it go.
  chooseHold: (c) => ({ holding: c.recovery?.snapshot?.name ?? null }),
  // The EtcdSnapshot is being deleted (or gone) before it was held: nothing was changed.
  refuseSnapshotGone: (c, e) => ({
    ...refused(
      c,
      `EtcdSnapshot ${c.recovery?.snapshot?.name ?? ''} is being deleted (${failureOf(e)?.message ?? 'gone'}): a restore from it could not fetch it; ask again with another snapshot`,
    ),
    holding: null,
  }),
  recordReleased: () => ({ holding: null }),
  // Why the seed cannot restore, said while it is deleted; the refusal follows once it is gone.
  failSeed: (c) => {
    const r = c.recovery;
    const why = seedUnrestorable(c)?.trouble?.message ?? 'its restore cannot read the snapshot';
    return r ? { recovery: { ...r, seedFailure: why } } : {};
  },
  // The seed never started, so etcd's list from before it (marked stale when it was made) is still
  // what etcd last said: a next request is judged on it, as when the seed could not be made. Left
  // stale, the cluster would wait for an answer that members without a quorum never give.
  abandonUnrestorable: (c) => {
    const r = c.recovery;
    return r ? { ...refused(c, seedUnrestorableMessage(r), r.lost), restarting: true, etcdStale: false } : {};
  },
  recordRevision: (c, e) => {
    const read = 'result' in e ? e.result?.revision : undefined;
    return c.recovery && typeof read === 'number' ? { recovery: { ...c.recovery, lastKnownRevision: read } } : {};
  },
  // The seed's name is taken once: a name is never reused, even by a createMember that failed.
  chooseRecoverySeed: (c) =>
    c.recovery && !c.recovery.seed
      ? {
          recovery: {
            ...c.recovery,
            seed: { member: memberName(c.cluster.name, c.nextOrdinal), ordinal: c.nextOrdinal },
          },
          nextOrdinal: c.nextOrdinal + 1,
        }
      : {},
  // The seed could not be made (its EtcdSnapshot deleted meanwhile): the recovery ends refused, and
  // the members it stopped are started again before any next request is judged.
  abandonSeed: (c, e) => {
    const r = c.recovery;
    const error = failureOf(e) ?? { code: '', message: '' };
    return { ...refused(c, r ? seedAbandonedMessage(r, error) : error.message, r?.lost ?? []), restarting: true };
  },
  finishRestart: () => ({ restarting: false }),
  // Accounted for as any member the machine created; etcd's list from before it is not read as after.
  recordSeedCreated: (c) => {
    const seed = c.recovery?.seed?.member;
    return seed && !c.memberNames.includes(seed) ? { memberNames: [...c.memberNames, seed], etcdStale: true } : {};
  },
  // The restored cluster has a new cluster ID: the one its seed answers with is the cluster's now.
  // Its data is the snapshot's, authentication state included (another cluster's may have it off):
  // whether auth is on is not known any more, and spec.auth.enabled asks etcd again.
  latchRestoredClusterID: (c) => ({ clusterID: c.etcd?.clusterID ?? null, authEnabled: undefined }),
  chooseLostToDelete: (c) => (c.recovery ? { recovery: { ...c.recovery, deleting: nextToDelete(c) ?? null } } : {}),
  recordDeleted: (c) => {
    const r = c.recovery;
    return r?.deleting ? { recovery: { ...r, deleted: [...r.deleted, r.deleting], deleting: null } } : {};
  },
  finishRecovery: (c) => ({
    recovery: null,
    recovered: c.recovery
      ? { requestID: c.recovery.requestID, result: 'recovered', message: recoveredMessage(c.recovery), at: c.now }
      : null,
    etcdStale: true,
  }),
} satisfies Record<string, RecoveryUpdate>;

/** setDormant for every lost member still listed: their Pods stop, their volumes stay until they are deleted. */
export const stopLostParams = ({ context: c }: Ctx): SetDormantParams => ({ members: lostListed(c), dormant: true });

/** setForceNewCluster on the survivor: with the request's ID (the forced start), or null (plain again). */
export const forceParams =
  (on: boolean) =>
  ({ context: c }: Ctx): SetForceNewClusterParams => ({
    member: c.recovery?.survivor ?? '',
    requestID: on ? (c.recovery?.requestID ?? null) : null,
  });

/** setDormant off for the members a refused recovery had stopped: they start again with their data. */
export const restartParams = ({ context: c }: { context: SeedView }): SetDormantParams => ({
  members: stoppedListed(c),
  dormant: false,
  ...(c.target?.trust !== undefined ? { trust: c.target.trust } : {}),
});

/** deleteMember for the lost member chosen to go now. */
export const deleteLostParams = ({ context: c }: Ctx): MemberParams => ({ member: c.recovery?.deleting ?? '' });

/** resolveRecoverySnapshot: the snapshot named, or the newest good one of this cluster. */
export const resolveSnapshotParams = ({ context: c }: Ctx): ResolveRecoverySnapshotParams => ({
  cluster: c.cluster.name,
  requestID: c.recovery?.requestID ?? '',
  ...(c.recoveryAsked?.snapshotName !== undefined ? { snapshotName: c.recoveryAsked.snapshotName } : {}),
});

/** createMember for the recovery's seed: a member of a new cluster of one, its data dir restored from the snapshot. */
export const seedParams = ({ context: c }: { context: SeedView }): CreateMemberParams => {
  const seed = c.recovery?.seed;
  const trust = c.target?.trust;
  return {
    member: seed?.member ?? '',
    ordinal: seed?.ordinal ?? -1,
    bootstrap: true,
    initialCluster: seed ? seedInitialCluster(c.cluster, seed.member) : '',
    version: c.target?.version ?? c.spec?.version ?? '',
    ...(trust !== undefined ? { trust } : {}),
    restoreFrom: c.recovery?.snapshot?.name ?? '',
  };
};

/** readRevision: the cluster's revision before a rollback stops anything. */
export const readRevisionParams = ({ context: c }: Ctx): ReadRevisionParams => ({ cluster: c.cluster.name });

/** holdSnapshot and releaseSnapshotHold: the EtcdSnapshot the recovery restores from, held by this cluster. */
export const holdParams = ({ context: c }: Ctx): SnapshotHoldParams => ({
  snapshot: c.holding ?? c.recovery?.snapshot?.name ?? '',
  cluster: c.cluster.name,
});

/** deleteMember for a seed that cannot restore. */
export const seedMemberParams = ({ context: c }: Ctx): MemberParams => ({ member: c.recovery?.seed?.member ?? '' });
