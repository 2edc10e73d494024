/**
 * moveLeader: hands leadership from a member about to restart to another voter, so a rolling
 * upgrade costs one planned election instead of an election timeout. etcd accepts the request
 * only on the leader; a member that no longer leads counts as done.
 */
import { ERR } from '../../machines/error-codes.ts';
import type { MoveLeaderParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { call, etcdError } from './_call.ts';
import type { EtcdContext } from './clients.ts';
import { canonicalID, decimalID, hexID } from './ids.ts';

/** moveLeader returns the leader after the move. */
export type MoveLeaderResult = { readonly leader: string };

const CODE = ERR.MOVE_LEADER;

/** The leader the member names (hex), asking the member itself. */
async function leaderSeenBy(params: MoveLeaderParams, ctx: EtcdContext): Promise<string> {
  try {
    const status = await call(ctx.signal, ctx.etcd.callTimeoutMs, (o) =>
      ctx.etcd.member(ctx.cluster, params.member).maintenance.status(o),
    );
    return hexID(status.leader);
  } catch (err) {
    throw etcdError(CODE, `status of ${params.member}`, err);
  }
}

/** Moves leadership off params.member to params.toID, or finds it already elsewhere. */
export const moveLeader: IntentHandler<'moveLeader', MoveLeaderResult, EtcdContext> = {
  kind: 'moveLeader',

  async run(params, ctx) {
    const from = canonicalID(params.memberID);
    const leader = await leaderSeenBy(params, ctx);
    if (leader !== from) return { leader };
    if (!params.toID)
      throw new EffectError(CODE, `no other healthy voter to take leadership from ${params.member}`, {
        retryable: true,
      });
    try {
      await call(ctx.signal, ctx.etcd.callTimeoutMs, (o) =>
        ctx.etcd.member(ctx.cluster, params.member).maintenance.moveLeader({ targetID: decimalID(params.toID) }, o),
      );
    } catch (err) {
      throw etcdError(CODE, `moving leadership from ${params.member} to ${params.toID}`, err);
    }
    ctx.log.info({ from: params.member, to: params.toID }, 'leadership moved');
    return { leader: canonicalID(params.toID) };
  },

  async recover(params, ctx) {
    const leader = await leaderSeenBy(params, ctx);
    return leader !== canonicalID(params.memberID) ? { done: true, result: { leader } } : { done: false };
  },
};
