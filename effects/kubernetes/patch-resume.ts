/**
 * The resume point's writer: a merge patch of one annotation on an object of the operator's kinds
 * (the object itself, not its status: the annotation is where `kubectl describe` shortens it to
 * one line). Null removes it.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { apiError, callOptions, isNotFound } from './_util.ts';
import type { KubeContext } from './context.ts';
import { customRef } from './objects.ts';

/** Sets annotation `key` of the object `name` in collection `plural` to `value` (removes it for null). */
export async function patchAnnotation(
  ctx: KubeContext,
  plural: string,
  name: string,
  key: string,
  value: string | null,
): Promise<void> {
  const what = `annotation ${key} of ${plural} ${ctx.cluster.namespace}/${name}`;
  try {
    await ctx.kube.custom.patchNamespacedCustomObject(
      { ...customRef(ctx, plural, name), body: { metadata: { annotations: { [key]: value } } } },
      callOptions(ctx.signal, PatchStrategy.MergePatch),
    );
  } catch (err) {
    if (isNotFound(err))
      throw new EffectError(ERR.PATCH_STATUS_GONE, `${what}: the object is gone`, { retryable: false, cause: err });
    throw apiError(ERR.PATCH_STATUS, `patching ${what}`, err);
  }
}
