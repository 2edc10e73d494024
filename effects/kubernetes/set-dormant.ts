/**
 * setDormant: marks members dormant (scale to zero: their Pods go, volumes stay) or awake again;
 * waking, with the CA digest their Pods are to start with in the same patch.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import type { EtcdMember } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import type { SetDormantParams } from '../../machines/intents.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { apiError, callOptions, isNotFound } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** The members whose spec.dormant now has the asked value (missing ones are left out). */
export type SetDormantResult = { readonly members: readonly string[] };

/** Whether the EtcdMember already has the asked spec.dormant, and spec.trust when one is asked. */
const isSet = (member: EtcdMember, params: SetDormantParams): boolean =>
  member.spec.dormant === params.dormant && (params.trust === undefined || member.spec.trust === params.trust);

/** Merge-patches spec.dormant (and spec.trust) on each named member that differs; a member that is gone is skipped. */
export const setDormant: IntentHandler<'setDormant', SetDormantResult, KubeContext> = {
  kind: 'setDormant',
  async run(params, ctx) {
    const done: string[] = [];
    for (const name of params.members) {
      const member = await readMember(ctx, name);
      if (!member) continue;
      if (!isSet(member, params)) {
        // One patch, so the member machine never sees it awake with the CAs it was parked with.
        const body = {
          spec: { dormant: params.dormant, ...(params.trust !== undefined ? { trust: params.trust } : {}) },
        };
        try {
          await ctx.kube.custom.patchNamespacedCustomObject(
            { ...customRef(ctx, PLURAL.member, name), body },
            callOptions(ctx.signal, PatchStrategy.MergePatch),
          );
        } catch (err) {
          if (isNotFound(err)) continue;
          throw apiError(ERR.SET_DORMANT, `setting EtcdMember ${name} dormant=${params.dormant}`, err);
        }
      }
      done.push(name);
    }
    return { members: done };
  },
  async recover(params, ctx): Promise<Recovered<SetDormantResult>> {
    const done: string[] = [];
    for (const name of params.members) {
      const member = await readMember(ctx, name);
      if (!member) continue;
      if (!isSet(member, params)) return { done: false };
      done.push(name);
    }
    return { done: true, result: { members: done } };
  },
};
