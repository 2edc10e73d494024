import { ERR } from '../../machines/error-codes.ts';
/**
 * deleteMember: deletes the EtcdMember. Its finalizer keeps it until the member machine has
 * taken the member out of etcd; the garbage collector then takes its Pod and PVC.
 */
import { EffectError } from '../types.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, deleteOrGone } from './_util.ts';
import type { KubeContext } from './context.ts';
import { controllerUid, PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** Nothing to report. */
export type DeleteMemberResult = Record<string, never>;

/** Deletes the EtcdMember if it is ours; a missing one counts as done. */
export const deleteMember: IntentHandler<'deleteMember', DeleteMemberResult, KubeContext> = {
  kind: 'deleteMember',
  async run(params, ctx) {
    const member = await readMember(ctx, params.member);
    if (!member || member.metadata.deletionTimestamp) return {};
    if (controllerUid(member.metadata) !== ctx.cluster.uid) {
      throw new EffectError(
        ERR.DELETE_MEMBER_FOREIGN,
        `EtcdMember ${params.member} does not belong to cluster ${ctx.cluster.name}`,
        { retryable: false },
      );
    }
    // The uid precondition deletes exactly the member read above, never a later one.
    const body = { propagationPolicy: 'Background', preconditions: { uid: member.metadata.uid } };
    await deleteOrGone(ERR.DELETE_MEMBER, `deleting EtcdMember ${params.member}`, () =>
      ctx.kube.custom.deleteNamespacedCustomObject(
        { ...customRef(ctx, PLURAL.member, params.member), body },
        callOptions(ctx.signal),
      ),
    );
    return {};
  },
  async recover(params, ctx): Promise<Recovered<DeleteMemberResult>> {
    const member = await readMember(ctx, params.member);
    return !member || member.metadata.deletionTimestamp ? { done: true, result: {} } : { done: false };
  },
};
