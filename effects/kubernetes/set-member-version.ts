/**
 * setMemberVersion: sets the etcd version of one EtcdMember (a step of a rolling upgrade). Its
 * member machine sees its Pod run another version, and restarts it on this one.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { apiError, callOptions } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** setMemberVersion returns nothing but success. */
export type SetMemberVersionResult = Readonly<Record<string, never>>;

/** Merge-patches spec.version; a member already on the version counts as done. */
export const setMemberVersion: IntentHandler<'setMemberVersion', SetMemberVersionResult, KubeContext> = {
  kind: 'setMemberVersion',
  async run(params, ctx) {
    const member = await readMember(ctx, params.member);
    // The member went (deleted meanwhile): the cluster machine sees it gone and chooses again.
    if (!member)
      throw new EffectError(ERR.SET_MEMBER_VERSION, `EtcdMember ${params.member} is gone`, { retryable: false });
    if (member.spec.version === params.version) return {};
    try {
      await ctx.kube.custom.patchNamespacedCustomObject(
        { ...customRef(ctx, PLURAL.member, params.member), body: { spec: { version: params.version } } },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
    } catch (err) {
      throw apiError(ERR.SET_MEMBER_VERSION, `setting EtcdMember ${params.member} to etcd ${params.version}`, err);
    }
    ctx.log.info({ member: params.member, version: params.version }, 'member set to a new etcd version');
    return {};
  },
  async recover(params, ctx): Promise<Recovered<SetMemberVersionResult>> {
    const member = await readMember(ctx, params.member);
    return member?.spec.version === params.version ? { done: true, result: {} } : { done: false };
  },
};
