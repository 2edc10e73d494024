/**
 * setForceNewCluster: sets or clears spec.forceNewCluster of a recovery's survivor. Its member
 * machine sees its Pod started otherwise and makes it again: once with --force-new-cluster, then
 * plainly.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import type { EtcdMember } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import type { SetForceNewClusterParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { apiError, callOptions } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** setForceNewCluster returns nothing but success. */
export type SetForceNewClusterResult = Readonly<Record<string, never>>;

/** Whether the EtcdMember already says what is asked. */
const isSet = (member: EtcdMember | null, params: SetForceNewClusterParams): boolean =>
  member !== null && (member.spec.forceNewCluster ?? null) === params.requestID;

/** Merge-patches spec.forceNewCluster (null removes it); a member already so counts as done. */
export const setForceNewCluster: IntentHandler<'setForceNewCluster', SetForceNewClusterResult, KubeContext> = {
  kind: 'setForceNewCluster',
  async run(params, ctx) {
    const member = await readMember(ctx, params.member);
    // The survivor went (deleted by hand meanwhile): nothing is forced; the recovery cannot go on.
    if (!member)
      throw new EffectError(ERR.SET_FORCE_NEW_CLUSTER, `EtcdMember ${params.member} is gone`, { retryable: false });
    if (isSet(member, params)) return {};
    try {
      await ctx.kube.custom.patchNamespacedCustomObject(
        { ...customRef(ctx, PLURAL.member, params.member), body: { spec: { forceNewCluster: params.requestID } } },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw apiError(ERR.SET_FORCE_NEW_CLUSTER, `setting spec.forceNewCluster of EtcdMember ${params.member}`, err);
    }
    ctx.log.info({ member: params.member, requestID: params.requestID }, 'member force-new-cluster set');
    return {};
  },
  async recover(params, ctx): Promise<Recovered<SetForceNewClusterResult>> {
    return isSet(await readMember(ctx, params.member), params) ? { done: true, result: {} } : { done: false };
  },
};
