/**
 * releaseFinalizer: takes the operator's finalizer off an EtcdMember so it can go. Only ours is
 * removed (finalizers.ts): another's added meanwhile is kept.
 */
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import type { KubeContext } from './context.ts';
import { changeFinalizer } from './finalizers.ts';
import { FINALIZER, PLURAL } from './meta.ts';
import { readMember } from './objects.ts';

/** Nothing to report. */
export type ReleaseFinalizerResult = Record<string, never>;

/** Removes our finalizer; a member that is gone, or has no finalizer of ours, counts as done. */
export const releaseFinalizer: IntentHandler<'releaseFinalizer', ReleaseFinalizerResult, KubeContext> = {
  kind: 'releaseFinalizer',
  async run(params, ctx) {
    const what = `EtcdMember ${params.member}`;
    const change = { plural: PLURAL.member, name: params.member, finalizer: FINALIZER, add: false, what };
    await changeFinalizer(ctx, { ...change, code: ERR.RELEASE_FINALIZER }, ERR.MEMBER_GONE);
    return {};
  },
  async recover(params, ctx): Promise<Recovered<ReleaseFinalizerResult>> {
    const member = await readMember(ctx, params.member);
    return member?.metadata.finalizers?.includes(FINALIZER) ? { done: false } : { done: true, result: {} };
  },
};
