/**
 * releaseFinalizer: takes the operator's finalizer off an EtcdMember so it can go. Only ours is
 * removed: a JSON patch tests the finalizer list it read, so another's added meanwhile is kept.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { apiError, callOptions, isConflict, isNotFound, httpStatus } from './_util.ts';
import type { KubeContext } from './context.ts';
import { FINALIZER, PLURAL } from './meta.ts';
import { customRef, readMember } from './objects.ts';

/** Nothing to report. */
export type ReleaseFinalizerResult = Record<string, never>;

/** Reads, then patches; a lost race (the list changed) reads again, a few times at most. */
const ATTEMPTS = 3;

/** Removes our finalizer; a member that is gone, or has no finalizer of ours, counts as done. */
export const releaseFinalizer: IntentHandler<'releaseFinalizer', ReleaseFinalizerResult, KubeContext> = {
  kind: 'releaseFinalizer',
  async run(params, ctx) {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const member = await readMember(ctx, params.member);
      const finalizers = member?.metadata.finalizers ?? [];
      if (!finalizers.includes(FINALIZER)) return {};
      const body = [
        { op: 'test', path: '/metadata/finalizers', value: finalizers },
        { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter((f) => f !== FINALIZER) },
      ];
      try {
        await ctx.kube.custom.patchNamespacedCustomObject(
          { ...customRef(ctx, PLURAL.member, params.member), body },
          callOptions(ctx.signal, PatchStrategy.JsonPatch),
        );
        return {};
      } catch (err) {
        if (isNotFound(err)) return {};
        // A failed test op is 422 (or 409 on a write race): the list changed, read it again.
        if (!isConflict(err) && httpStatus(err) !== 422)
          throw apiError(ERR.RELEASE_FINALIZER, `releasing EtcdMember ${params.member}`, err);
      }
    }
    throw new EffectError(ERR.RELEASE_FINALIZER, `EtcdMember ${params.member}'s finalizers kept changing; retrying`);
  },
  async recover(params, ctx): Promise<Recovered<ReleaseFinalizerResult>> {
    const member = await readMember(ctx, params.member);
    return member?.metadata.finalizers?.includes(FINALIZER) ? { done: false } : { done: true, result: {} };
  },
};
