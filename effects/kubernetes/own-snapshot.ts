/**
 * An EtcdSnapshot the operator creates under a name it chose (a schedule's run, an upgrade's
 * snapshot), told apart from anyone else's by what `ours` checks (its labels): creating it again
 * finds the one made before and counts it as done, and a snapshot by that name that is not ours
 * is never taken for it (a non-retryable ERR_CREATE_SNAPSHOT_FOREIGN saying whose it should be).
 */
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type Recovered } from '../types.ts';
import { apiError, callOptions, isConflict } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readSnapshot } from './objects.ts';

/** The EtcdSnapshot's uid. */
export type SnapshotResult = { readonly uid: string };

/** What tells our snapshot from another by its name, and how to say whose it should be. */
export interface Ownership {
  readonly ours: (s: EtcdSnapshot) => boolean;
  /** Ends "exists and is not ...": e.g. "made by EtcdSnapshotSchedule nightly". */
  readonly whose: string;
}

/** Creates `body`; one by its name that is ours counts as made (the uid of whichever). */
export async function createOwnSnapshot(ctx: KubeContext, body: EtcdSnapshot, o: Ownership): Promise<SnapshotResult> {
  const name = body.metadata.name ?? '';
  const what = `EtcdSnapshot ${ctx.cluster.namespace}/${name}`;
  try {
    const made = (await ctx.kube.custom.createNamespacedCustomObject(
      { ...customRef(ctx, PLURAL.snapshot, name), body },
      callOptions(ctx.signal),
    )) as EtcdSnapshot;
    return { uid: made.metadata.uid ?? '' };
  } catch (err) {
    if (!isConflict(err)) throw apiError(ERR.CREATE_SNAPSHOT, `creating ${what}`, err);
  }
  const existing = await readSnapshot(ctx, name);
  if (!existing) throw new EffectError(ERR.CREATE_SNAPSHOT, `${what} was there and is gone now; retrying creates it`);
  if (!o.ours(existing))
    throw new EffectError(ERR.CREATE_SNAPSHOT_FOREIGN, `${what} exists and is not ${o.whose}: delete or rename it`, {
      retryable: false,
    });
  return { uid: existing.metadata.uid ?? '' };
}

/** After a crash: done when our snapshot by that name exists. */
export async function recoverOwnSnapshot(
  ctx: KubeContext,
  name: string,
  ours: Ownership['ours'],
): Promise<Recovered<SnapshotResult>> {
  const existing = await readSnapshot(ctx, name);
  return existing && ours(existing) ? { done: true, result: { uid: existing.metadata.uid ?? '' } } : { done: false };
}
