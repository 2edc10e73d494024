/**
 * Status writers: a merge patch on the status subresource of an EtcdCluster, EtcdMember or EtcdSnapshot
 * with only the fields that differ, and no write at all when nothing changed.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import type {
  EtcdClusterStatus,
  EtcdMemberStatus,
  EtcdSnapshotScheduleStatus,
  EtcdSnapshotStatus,
} from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { apiError, callOptions, isNotFound, readOrNull } from './_util.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef } from './objects.ts';
import { sameJSON } from './same-json.ts';

/** Whether a write happened. */
export interface StatusWrite {
  readonly changed: boolean;
}

/** The top-level status fields of `desired` that differ from `current`. */
export function statusDiff<S extends object>(current: S | undefined, desired: S): Partial<S> {
  const diff: Partial<S> = {};
  for (const key of Object.keys(desired) as (keyof S)[]) {
    if (desired[key] !== undefined && !sameJSON(current?.[key], desired[key])) diff[key] = desired[key];
  }
  return diff;
}

async function patchStatus<S extends object>(
  ctx: KubeContext,
  plural: string,
  name: string,
  desired: S,
  current: S | undefined,
  clearable: readonly (keyof S)[] = [],
): Promise<StatusWrite> {
  const ref = customRef(ctx, plural, name);
  const what = `status of ${plural} ${ctx.cluster.namespace}/${name}`;
  let base = current;
  if (base === undefined) {
    const object = await readOrNull(
      ERR.PATCH_STATUS,
      `reading ${what}`,
      () => ctx.kube.custom.getNamespacedCustomObject(ref, callOptions(ctx.signal)) as Promise<{ status?: S }>,
    );
    if (!object) throw new EffectError(ERR.PATCH_STATUS_GONE, `${what}: the object is gone`, { retryable: false });
    base = object.status ?? ({} as S);
  }
  const diff: Record<string, unknown> = statusDiff(base, desired);
  // A merge patch removes a field given as null: for fields whose absence means something.
  for (const key of clearable) if (desired[key] === undefined && base[key] !== undefined) diff[key as string] = null;
  if (Object.keys(diff).length === 0) return { changed: false };
  try {
    await ctx.kube.custom.patchNamespacedCustomObjectStatus(
      { ...ref, body: { status: diff } },
      callOptions(ctx.signal, PatchStrategy.MergePatch),
    );
  } catch (err) {
    if (isNotFound(err))
      throw new EffectError(ERR.PATCH_STATUS_GONE, `${what}: the object is gone`, { retryable: false, cause: err });
    throw apiError(ERR.PATCH_STATUS, `patching ${what}`, err);
  }
  return { changed: true };
}

/**
 * Writes the fields of `status` that differ on the context's EtcdCluster. `current` is the
 * status last read (from the informer); left out, it is read first.
 */
export function patchClusterStatus(
  ctx: KubeContext,
  status: EtcdClusterStatus,
  current?: EtcdClusterStatus,
): Promise<StatusWrite> {
  return patchStatus(ctx, PLURAL.cluster, ctx.cluster.name, status, current);
}

/** Writes the fields of `status` that differ on EtcdMember `member`; `current` as for patchClusterStatus. */
export function patchMemberStatus(
  ctx: KubeContext,
  member: string,
  status: EtcdMemberStatus,
  current?: EtcdMemberStatus,
): Promise<StatusWrite> {
  return patchStatus(ctx, PLURAL.member, member, status, current);
}

/** Writes the fields of `status` that differ on EtcdSnapshot `snapshot`; `current` as for patchClusterStatus. */
export function patchSnapshotStatus(
  ctx: KubeContext,
  snapshot: string,
  status: EtcdSnapshotStatus,
  current?: EtcdSnapshotStatus,
): Promise<StatusWrite> {
  return patchStatus(ctx, PLURAL.snapshot, snapshot, status, current);
}

/**
 * Writes the fields of `status` that differ on EtcdSnapshotSchedule `schedule`; `current` as for
 * patchClusterStatus. `active` and `nextScheduleTime` are removed when absent: no snapshot runs,
 * no fire time is ahead.
 */
export function patchScheduleStatus(
  ctx: KubeContext,
  schedule: string,
  status: EtcdSnapshotScheduleStatus,
  current?: EtcdSnapshotScheduleStatus,
): Promise<StatusWrite> {
  return patchStatus(ctx, PLURAL.schedule, schedule, status, current, ['active', 'nextScheduleTime']);
}
