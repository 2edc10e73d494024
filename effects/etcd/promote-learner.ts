import { ERR } from '../../machines/error-codes.ts';
/**
 * promoteLearner: makes a learner a voter once etcd says it has caught up. A member that is
 * already a voter counts as done (an earlier try succeeded); one not yet in sync is reported
 * as ERR_LEARNER_NOT_IN_SYNC, retryable: promotion is retried, never forced.
 */
import type { PromoteLearnerParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { codeOf, etcdError, listMembers, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';
import { canonicalID, decimalID, hexID } from './ids.ts';

/** promoteLearner returns nothing but success. */
export type PromoteLearnerResult = Readonly<Record<string, never>>;

const CODE = ERR.PROMOTE_LEARNER;

/** Whether the member is a voter (true), a learner (false); throws when etcd does not know it. */
async function isVoter(params: PromoteLearnerParams, ctx: EtcdContext): Promise<boolean> {
  const id = canonicalID(params.memberID);
  const found = (await listMembers(ctx, CODE)).members.find((m) => hexID(m.ID) === id);
  // Non-retryable: the learner is gone (removed by hand?) and only a new addLearner can bring it back.
  if (!found)
    throw new EffectError(ERR.MEMBER_NOT_FOUND, `member ${id} (${params.member}) is not in the cluster`, {
      retryable: false,
    });
  return !found.isLearner;
}

/** Promotes one learner, or finds it already promoted. */
export const promoteLearner: IntentHandler<'promoteLearner', PromoteLearnerResult, EtcdContext> = {
  kind: 'promoteLearner',

  async run(params, ctx) {
    if (await isVoter(params, ctx)) return {};
    try {
      await onCluster(ctx, (client, o) => client.cluster.memberPromote({ ID: decimalID(params.memberID) }, o));
      ctx.log.info({ member: params.member, memberID: params.memberID }, 'learner promoted');
      return {};
    } catch (err) {
      const error = etcdError(CODE, `promote ${params.member}`, err);
      // A retried call whose first answer was lost finds the member already promoted.
      if (codeOf(error) === ERR.NOT_A_LEARNER && (await isVoter(params, ctx))) return {};
      throw error;
    }
  },

  async recover(params, ctx) {
    try {
      return (await isVoter(params, ctx)) ? { done: true, result: {} } : { done: false };
    } catch (err) {
      if (codeOf(err) === ERR.MEMBER_NOT_FOUND) return { done: false };
      throw err;
    }
  },
};
