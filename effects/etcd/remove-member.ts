/**
 * removeEtcdMember: removes one member from etcd, found by ID when the intent has one (an
 * orphan), else by peer URL (names are never reused, so a peer URL is one incarnation).
 * A member that is not there counts as done. The last voter is never removed.
 */
import type { IMember } from 'etcd3';
import { ERR } from '../../machines/error-codes.ts';
import type { RemoveEtcdMemberParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { codeOf, etcdError, listMembers, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';
import { canonicalID, hexID } from './ids.ts';

/** The removed member's hex ID, or null when there was nothing to remove. */
export interface RemoveEtcdMemberResult extends Readonly<Record<string, unknown>> {
  readonly removedID: string | null;
}

const CODE = ERR.REMOVE_MEMBER;

/** The member the intent names, in a fresh list. */
function target(members: readonly IMember[], params: RemoveEtcdMemberParams): IMember | undefined {
  if (params.memberID !== null) {
    const id = canonicalID(params.memberID);
    return members.find((m) => hexID(m.ID) === id);
  }
  return members.find((m) => m.peerURLs.includes(params.peerURL));
}

/** Removes one member, or finds it already gone. */
export const removeEtcdMember: IntentHandler<'removeEtcdMember', RemoveEtcdMemberResult, EtcdContext> = {
  kind: 'removeEtcdMember',

  async run(params, ctx) {
    const { members } = await listMembers(ctx, CODE);
    const victim = target(members, params);
    if (!victim) return { removedID: null };
    const id = hexID(victim.ID);
    // Non-retryable: removing the last voter destroys the cluster, and no retry makes it safe.
    // The machines never ask for it; if one does, it must stop and show why, not spin.
    if (!victim.isLearner && !members.some((m) => m !== victim && !m.isLearner)) {
      throw new EffectError(
        ERR.LAST_VOTER,
        `member ${id} (${params.peerURL}) is the last voter; refusing to remove it`,
        { retryable: false },
      );
    }
    try {
      await onCluster(ctx, (client, o) => client.cluster.memberRemove({ ID: victim.ID }, o));
    } catch (err) {
      const error = etcdError(CODE, `remove member ${id}`, err);
      // An answer lost in transit makes onCluster ask the next member, which finds the member gone.
      if (codeOf(error) !== ERR.ETCD_MEMBER_UNKNOWN) throw error;
    }
    ctx.log.info({ memberID: id, peerURL: params.peerURL, reason: params.reason }, 'etcd member removed');
    return { removedID: id };
  },

  async recover(params, ctx) {
    const victim = target((await listMembers(ctx, CODE)).members, params);
    // Absent: done. The ID it had is not known any more, so the result cannot name it.
    return victim
      ? { done: false }
      : { done: true, result: { removedID: params.memberID === null ? null : canonicalID(params.memberID) } };
  },
};
