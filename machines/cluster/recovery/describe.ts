/** What a user reads about a recovery: each step, what will be lost, and the Recovered condition. */
import { ConditionReason } from '../../../api/conditions.ts';
import type { ConcernWords } from '../concern.ts';
import { candidates, describeRanked, type Recovery, type RecoveryView } from './rules.ts';

/** What a survivor's recovery loses: what the lost members had beyond the survivor's revision. */
export const lossMessage = (r: Pick<Recovery, 'survivor' | 'revision' | 'applied'>): string =>
  `the data is ${r.survivor}'s at revision ${r.revision} (raft applied index ${r.applied}): a write the lost members applied beyond it, if any, is lost; every write ${r.survivor} holds is kept, with its revisions`;

/** The Recovered condition's message once a recovery is done. */
export const recoveredMessage = (r: Recovery): string =>
  `recovered from ${r.survivor} (request ${r.requestID}) with --force-new-cluster: ${lossMessage(r)}; ${r.lost.length > 0 ? `${r.lost.join(', ')} deleted, ` : ''}new members join as learners until spec.replicas voters run`;

/** What each step of a recovery says. */
export function recoveringMessage(sub: string, c: RecoveryView): string {
  const r = c.recovery;
  if (!r || sub.startsWith('judging')) {
    const ranked = candidates(c);
    return `judging recovery request ${c.recoveryAsked?.requestID ?? ''}${ranked.length > 0 ? `; answering: ${describeRanked(ranked)}` : ''}`;
  }
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
      message: `recovering from ${c.recovery.survivor} (request ${c.recovery.requestID}): ${lossMessage(c.recovery)}`,
    };
  const last = c.recovered;
  if (!last) return null;
  return last.result === 'recovered'
    ? { status: 'True', reason: ConditionReason.Completed, message: last.message }
    : {
        status: 'False',
        reason: ConditionReason.RecoveryRefused,
        message: `recovery request ${last.requestID} refused, nothing was changed: ${last.message}`,
      };
}

/** While quorum is lost: what a recovery from the most advanced member that answers would keep and lose. */
export function recoveryHint(c: RecoveryView): string {
  const best = candidates(c)[0];
  if (!best) return '';
  return `; if the members that do not answer are gone for good, a new spec.recovery.requestID recovers from ${best.member}: ${lossMessage({ survivor: best.member, revision: best.revision, applied: best.applied })}`;
}
