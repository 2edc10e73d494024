/** What a user reads about a recovery: each step, what will be lost, and the Recovered condition. */
import { ConditionReason } from '../../../api/conditions.ts';
import { ERR } from '../../error-codes.ts';
import type { ConcernWords } from '../concern.ts';
import { BUMP_REVISION } from '../../policy.ts';
import { candidates, describeRanked, type Recovery, type RecoveryView } from './rules.ts';

/** What a survivor's recovery loses: what the lost members had beyond the survivor's revision. */
export const lossMessage = (r: Pick<Recovery, 'survivor' | 'revision' | 'applied'>): string =>
  `the data is ${r.survivor}'s at revision ${r.revision} (raft applied index ${r.applied}): a write the lost members applied beyond it, if any, is lost; every write ${r.survivor} holds is kept, with its revisions`;

/**
 * What a recovery from a snapshot loses: every write after the snapshot's revision; against the
 * highest revision a member that answered reported, when one did. Revisions go on past both.
 */
export function snapshotLossMessage(r: Recovery): string {
  const s = r.snapshot;
  if (!s) return `the data will be a snapshot's; which one is being looked up`;
  return `the data is EtcdSnapshot ${s.name}'s at revision ${s.revision} (stored ${s.completionTime || 'at an unknown time'}, ${s.location}): every write after revision ${s.revision} is lost; ${lastKnown(r, s.revision)}; revisions go on from ${s.revision} + ${BUMP_REVISION}, marked compacted, so a watcher sees a compaction, never revisions going back`;
}

/** How far the cluster had gone beyond the snapshot's revision, as far as the operator knows. */
function lastKnown(r: Recovery, at: number): string {
  const known = r.lastKnownRevision;
  if (r.rollback === true)
    return known === null || known === undefined
      ? "the cluster's revision is being read"
      : `the cluster was at revision ${known} when the rollback was asked: the ${Math.max(0, known - at)} revisions after ${at} are lost`;
  if (known === null || known === undefined) return 'no member answered to say how far the cluster had gone';
  return known > at
    ? `the most advanced member that answered was at revision ${known}: the ${known - at} revisions after ${at} are lost`
    : `the most advanced member that answered was at revision ${known}, not beyond it`;
}

/** What the recovery loses, by where its data comes from. */
const lossOf = (r: Recovery): string => (r.from === 'snapshot' ? snapshotLossMessage(r) : lossMessage(r));

/** The Recovered condition's message once a recovery is done. */
export const recoveredMessage = (r: Recovery): string =>
  r.from === 'snapshot'
    ? `recovered from EtcdSnapshot ${r.snapshot?.name ?? ''} (request ${r.requestID}) into ${r.seed?.member ?? ''}: ${snapshotLossMessage(r)}; ${r.lost.length > 0 ? `${r.lost.join(', ')} deleted, ` : ''}new members join as learners until spec.replicas voters run`
    : `recovered from ${r.survivor} (request ${r.requestID}) with --force-new-cluster: ${lossMessage(r)}; ${r.lost.length > 0 ? `${r.lost.join(', ')} deleted, ` : ''}new members join as learners until spec.replicas voters run`;

/**
 * Why a recovery from a snapshot ended without its seed: the EtcdSnapshot deleted after it was
 * found (ERR_SNAPSHOT_GONE), or the seed refused otherwise; what happens to the members it stopped.
 */
export function seedAbandonedMessage(r: Recovery, error: { readonly code: string; readonly message: string }): string {
  const name = r.snapshot?.name ?? '';
  const seed = r.seed?.member ?? 'the restored member';
  const why =
    error.code === ERR.SNAPSHOT_GONE
      ? `EtcdSnapshot ${name} was deleted after the recovery found it, before ${seed} was made from it (${error.message})`
      : `${seed} could not be made from EtcdSnapshot ${name} (${error.code}: ${error.message})`;
  const stopped =
    r.lost.length > 0
      ? `; ${r.lost.join(', ')}, stopped for the restore, start again as they were, each with its own volume and data`
      : '';
  return `${why}: nothing was restored and nothing deleted${stopped}; ask again with a new requestID (another snapshot, or from a survivor) if the cluster still needs it`;
}

/** Why a recovery from a snapshot ended when its seed could not restore, and what happens to the members it stopped. */
export function seedUnrestorableMessage(r: Recovery): string {
  const seed = r.seed?.member ?? 'the restored member';
  const stopped =
    r.lost.length > 0
      ? `; ${r.lost.join(', ')}, stopped for the restore, start again as they were, each with its own volume and data`
      : '';
  return `${seed} could not restore from EtcdSnapshot ${r.snapshot?.name ?? ''} (${r.seedFailure ?? 'its stored file cannot be read'}), which no retry fixes: ${seed} was deleted, nothing was restored and nothing else deleted${stopped}; ask again with a new requestID (another snapshot, or from a survivor) if the cluster still needs it`;
}

/** What each step of a recovery from a snapshot says. */
function restoringMessage(sub: string, r: Recovery): string {
  if (sub.startsWith('resolvingSnapshot') || sub.startsWith('checkingSnapshot'))
    return `recovering from a snapshot (request ${r.requestID}): finding ${r.snapshot ? `EtcdSnapshot ${r.snapshot.name}` : 'the snapshot'}; nothing is changed before it is found`;
  const head = `recovering from EtcdSnapshot ${r.snapshot?.name ?? ''} (request ${r.requestID}); ${snapshotLossMessage(r)}`;
  const lost = r.lost.join(', ') || 'none';
  const held = `EtcdSnapshot ${r.snapshot?.name ?? ''}`;
  if (sub.startsWith('holdingSnapshot') || sub.startsWith('snapshotHeld'))
    return `${head}: holding ${held} with this cluster's finalizer, so that deleting it keeps its stored file until the restore no longer needs it; nothing is changed before it is held`;
  if (sub.startsWith('stoppingLost') || sub.startsWith('awaitingStopped'))
    return `${head}: stopping the Pods of every member (${lost}); their volumes stay until the restored member answers`;
  if (sub.startsWith('removingSeed') || sub.startsWith('awaitingSeedGone'))
    return `${head}: ${r.seed?.member ?? 'the restored member'} cannot restore (${r.seedFailure ?? ''}), which no retry fixes: deleting it, then the members stopped for it start again`;
  if (sub.startsWith('releasing'))
    return `${head}: ${r.seed?.member ?? 'the restored member'} answers alone and leads; letting go of ${held}, whose deletion, if asked, then goes on`;
  if (sub.startsWith('creatingSeed') || sub.startsWith('awaitingSeed'))
    return `${head}: restoring ${r.seed?.member ?? 'a new member'} from the snapshot, waiting until it answers alone and leads`;
  return `${head}: deleting the old EtcdMembers (${lost}); new members join next`;
}

/** What each step of a recovery says. */
export function recoveringMessage(sub: string, c: RecoveryView): string {
  const r = c.recovery;
  if (!r && sub.startsWith('releasing'))
    return `recovery request ${c.recovered?.requestID ?? ''} refused: letting go of EtcdSnapshot ${c.holding ?? ''}, then starting again the members stopped for it (${(c.recovered?.restarted ?? []).join(', ')}), each with its own volume and data`;
  if (sub.startsWith('restartingStopped') || sub.startsWith('awaitingRestarted'))
    return `recovery request ${c.recovered?.requestID ?? ''} refused: starting again the members stopped for it (${(c.recovered?.restarted ?? []).join(', ')}), each with its own volume and data`;
  if (!r || sub.startsWith('judging')) {
    const ranked = candidates(c);
    return `judging recovery request ${c.recoveryAsked?.requestID ?? ''}${ranked.length > 0 ? `; answering: ${describeRanked(ranked)}` : ''}`;
  }
  if (r.from === 'snapshot') return restoringMessage(sub, r);
  const head = `recovering from ${r.survivor} (request ${r.requestID}); ${lossMessage(r)}`;
  const lost = r.lost.join(', ') || 'none';
  if (sub.startsWith('stoppingLost') || sub.startsWith('awaitingStopped'))
    return `${head}: stopping the Pods of the lost members (${lost}) before the survivor runs alone`;
  if (sub.startsWith('forcing') || sub.startsWith('awaitingForced'))
    return `${head}: restarting ${r.survivor} once with --force-new-cluster, waiting until etcd lists it alone and it leads`;
  if (sub.startsWith('unforcing') || sub.startsWith('awaitingPlain'))
    return `${head}: restarting ${r.survivor} without --force-new-cluster, so a later restart never forces again`;
  return `${head}: deleting the lost EtcdMembers (${lost}); new members join next`;
}

/** The recovery's words. Its Recovered condition is set by the manager's status from `recovered` and `recovery`. */
export const recoveryWords: ConcernWords = {
  describe: { recovering: recoveringMessage },
  completes: {},
};

/** The Recovered condition: the recovery in flight, or how the last request ended; null before any. */
export function recoveryCondition(
  c: RecoveryView,
): { status: 'True' | 'False'; reason: string; message: string } | null {
  if (c.recovery)
    return {
      status: 'False',
      reason: ConditionReason.Recovering,
      message:
        c.recovery.from === 'snapshot'
          ? `recovering from ${c.recovery.snapshot ? `EtcdSnapshot ${c.recovery.snapshot.name}` : 'a snapshot'} (request ${c.recovery.requestID}): ${lossOf(c.recovery)}`
          : `recovering from ${c.recovery.survivor} (request ${c.recovery.requestID}): ${lossOf(c.recovery)}`,
    };
  const last = c.recovered;
  if (!last) return null;
  return last.result === 'recovered'
    ? { status: 'True', reason: ConditionReason.Completed, message: last.message }
    : {
        status: 'False',
        reason: ConditionReason.RecoveryRefused,
        message: `recovery request ${last.requestID} refused${last.restarted ? '' : ', nothing was changed'}: ${last.message}`,
      };
}

/** While quorum is lost: what a recovery from the most advanced member that answers would keep and lose. */
export function recoveryHint(c: RecoveryView): string {
  const best = candidates(c)[0];
  if (!best) return '';
  return `; if the members that do not answer are gone for good, a new spec.recovery.requestID recovers from ${best.member}: ${lossMessage({ survivor: best.member, revision: best.revision, applied: best.applied })}`;
}
