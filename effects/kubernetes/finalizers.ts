/**
 * Adding and removing one of the operator's finalizers on one of its kinds. The patch carries
 * the resourceVersion it read, so a finalizer someone else adds or removes meanwhile is kept.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import type { ErrorCode } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { apiError, callOptions, isConflict, isNotFound, readOrNull } from './_util.ts';
import type { KubeContext } from './context.ts';
import { customRef } from './objects.ts';

/** Reads, then patches; a lost race (the list changed) reads again, a few times at most. */
const ATTEMPTS = 3;

/** What to change, and how to name it in errors. */
export interface FinalizerChange {
  readonly plural: string;
  readonly name: string;
  readonly finalizer: string;
  readonly add: boolean;
  readonly code: ErrorCode;
  /** Kind and name for messages, e.g. `EtcdSnapshot nightly-1`. */
  readonly what: string;
}

/** The object's finalizers and resourceVersion, or null when it is gone. */
async function read(
  ctx: KubeContext,
  c: Pick<FinalizerChange, 'plural' | 'name' | 'code' | 'what'>,
): Promise<{ readonly finalizers: readonly string[]; readonly resourceVersion: string } | null> {
  const object = (await readOrNull(c.code, `reading ${c.what}`, () =>
    ctx.kube.custom.getNamespacedCustomObject(customRef(ctx, c.plural, c.name), callOptions(ctx.signal)),
  )) as { metadata?: { finalizers?: string[]; resourceVersion?: string } } | null;
  if (!object) return null;
  return { finalizers: object.metadata?.finalizers ?? [], resourceVersion: object.metadata?.resourceVersion ?? '' };
}

/** Whether the object carries the finalizer (a recover's reading of a change), or null when it is gone. */
export async function hasFinalizer(
  ctx: KubeContext,
  c: Pick<FinalizerChange, 'plural' | 'name' | 'finalizer' | 'code' | 'what'>,
): Promise<boolean | null> {
  const current = await read(ctx, c);
  return current === null ? null : current.finalizers.includes(c.finalizer);
}

/**
 * Adds or removes the finalizer, with the resourceVersion it read: a change meanwhile (409) reads
 * again. Removing from an object that is gone, or has no such finalizer, counts as done; adding to
 * an object that is gone is a non-retryable error (`gone`).
 */
export async function changeFinalizer(ctx: KubeContext, c: FinalizerChange, gone: ErrorCode): Promise<void> {
  const goneError = () => new EffectError(gone, `${c.what} no longer exists`, { retryable: false });
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const current = await read(ctx, c);
    if (current === null) {
      if (!c.add) return;
      throw goneError();
    }
    const { finalizers, resourceVersion } = current;
    if (finalizers.includes(c.finalizer) === c.add) return;
    const next = c.add ? [...finalizers, c.finalizer] : finalizers.filter((f) => f !== c.finalizer);
    try {
      await ctx.kube.custom.patchNamespacedCustomObject(
        { ...customRef(ctx, c.plural, c.name), body: { metadata: { resourceVersion, finalizers: next } } },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
      return;
    } catch (err) {
      if (isNotFound(err)) {
        if (!c.add) return;
        throw goneError();
      }
      if (!isConflict(err)) throw apiError(c.code, `${c.add ? 'adding a finalizer to' : 'releasing'} ${c.what}`, err);
    }
  }
  throw new EffectError(c.code, `${c.what}'s finalizers kept changing; retrying`);
}
