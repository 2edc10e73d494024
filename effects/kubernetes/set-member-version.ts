/**
 * setMemberVersion: sets the etcd version of one EtcdMember and the CA digest its Pod is to start
 * with (a step of a roll). Its member machine sees its Pod run another version or started with
 * another digest, and makes it again with these.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import type { EtcdMember } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import type { SetMemberVersionParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { apiError, callOptions } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** setMemberVersion returns nothing but success. */
export type SetMemberVersionResult = Readonly<Record<string, never>>;

/** Whether the EtcdMember already names this version and digest (none asked: any). */
const isSet = (member: EtcdMember | null, params: SetMemberVersionParams): boolean =>
  member?.spec.version === params.version && (params.trust === undefined || member.spec.trust === params.trust);

/** Merge-patches spec.version and spec.trust; a member already on both counts as done. */
export const setMemberVersion: IntentHandler<'setMemberVersion', SetMemberVersionResult, KubeContext> = {
  kind: 'setMemberVersion',
  async run(params, ctx) {
    const member = await readMember(ctx, params.member);
    // The member went (deleted meanwhile): the cluster machine sees it gone and chooses again.
    if (!member)
      throw new EffectError(ERR.SET_MEMBER_VERSION, `EtcdMember ${params.member} is gone`, { retryable: false });
    if (isSet(member, params)) return {};
    const spec = { version: params.version, ...(params.trust !== undefined ? { trust: params.trust } : {}) };
    try {
      await ctx.kube.custom.patchNamespacedCustomObject(
        { ...customRef(ctx, PLURAL.member, params.member), body: { spec } },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw apiError(ERR.SET_MEMBER_VERSION, `setting EtcdMember ${params.member} to etcd ${params.version}`, err);
    }
    ctx.log.info({ member: params.member, ...spec }, 'member set to a new etcd version');
    return {};
  },
  async recover(params, ctx): Promise<Recovered<SetMemberVersionResult>> {
    return isSet(await readMember(ctx, params.member), params) ? { done: true, result: {} } : { done: false };
  },
};
