/**
 * addLearner: asks etcd to add a member as a learner and returns what the new member needs to
 * start (its ID and `--initial-cluster`). Never adds twice: a member with this peer URL is
 * the one an earlier try added, so a retry after a lost answer returns it as a success.
 */
import type { IMember } from 'etcd3';
import { ERR } from '../../machines/error-codes.ts';
import type { AddLearnerParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { codeOf, etcdError, heldByThisMember, listMembers, onCluster } from './_call.ts';
import type { EtcdContext } from './clients.ts';
import { hexID } from './ids.ts';

/** What the new member starts with. */
export interface AddLearnerResult extends Readonly<Record<string, unknown>> {
  /** Canonical hex ID (see ids.ts). */
  readonly memberID: string;
  /** `name=peerURL,...` of every member, the new one under `member`. */
  readonly initialCluster: string;
}

const CODE = ERR.ADD_LEARNER;

/**
 * `--initial-cluster` as etcdctl prints it after `member add`: every peer URL of every member.
 * etcd learns a member's name only when it starts, so the new one is named from the intent.
 */
export function initialCluster(members: readonly IMember[], newID: string, newName: string): string {
  return members.flatMap((m) => m.peerURLs.map((url) => `${m.ID === newID ? newName : m.name}=${url}`)).join(',');
}

/** The result for a member that is already in the list, or undefined. */
function existing(members: readonly IMember[], params: AddLearnerParams): AddLearnerResult | undefined {
  const found = members.find((m) => m.peerURLs.includes(params.peerURL));
  return found && { memberID: hexID(found.ID), initialCluster: initialCluster(members, found.ID, params.member) };
}

/**
 * Another member that never started has no name, and an `--initial-cluster` entry without a
 * name would stop the new member from starting: the cluster machine removes such an orphan first.
 */
function refuseUnstarted(members: readonly IMember[], params: AddLearnerParams): void {
  const unstarted = members.find((m) => m.name === '' && !m.peerURLs.includes(params.peerURL));
  if (unstarted) {
    throw new EffectError(
      ERR.UNSTARTED_MEMBER,
      `member ${hexID(unstarted.ID)} (${unstarted.peerURLs.join(',')}) was added but never started; remove it before adding ${params.member}`,
    );
  }
}

/** Adds one learner, or returns the one an earlier try added. */
export const addLearner: IntentHandler<'addLearner', AddLearnerResult, EtcdContext> = {
  kind: 'addLearner',

  async run(params, ctx) {
    const before = await listMembers(ctx, CODE);
    const found = existing(before.members, params);
    if (found) {
      ctx.log.info({ member: params.member, memberID: found.memberID }, 'learner already added');
      return found;
    }
    refuseUnstarted(before.members, params);
    try {
      const res = await onCluster(
        ctx,
        (client, o) => client.cluster.memberAdd({ peerURLs: [params.peerURL], isLearner: true }, o),
        heldByThisMember,
      );
      ctx.log.info({ member: params.member, memberID: hexID(res.member.ID) }, 'learner added');
      return {
        memberID: hexID(res.member.ID),
        initialCluster: initialCluster(res.members, res.member.ID, params.member),
      };
    } catch (err) {
      const error = etcdError(CODE, `add learner ${params.member}`, err);
      // An answer lost in transit makes onCluster ask the next member, which finds the URL taken by our own add.
      if (codeOf(error) !== ERR.PEER_URL_EXISTS) throw error;
      const after = existing((await listMembers(ctx, CODE)).members, params);
      if (!after) throw error;
      return after;
    }
  },

  async recover(params, ctx) {
    const found = existing((await listMembers(ctx, CODE)).members, params);
    return found ? { done: true, result: found } : { done: false };
  },
};
