/** setDormant: marks members dormant (scale to zero: their Pods go, volumes stay) or awake again. */
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { apiError, callOptions, isNotFound } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** The members whose spec.dormant now has the asked value (missing ones are left out). */
export type SetDormantResult = { readonly members: readonly string[] };

/** Merge-patches spec.dormant on each named member that differs; a member that is gone is skipped. */
export const setDormant: IntentHandler<'setDormant', SetDormantResult, KubeContext> = {
  kind: 'setDormant',
  async run(params, ctx) {
    const done: string[] = [];
    for (const name of params.members) {
      const member = await readMember(ctx, name);
      if (!member) continue;
      if (member.spec.dormant !== params.dormant) {
        const body = { spec: { dormant: params.dormant } };
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
      if (member.spec.dormant !== params.dormant) return { done: false };
      done.push(name);
    }
    return { done: true, result: { members: done } };
  },
};
