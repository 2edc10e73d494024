/**
 * The handlers of the schedule machine: creating the EtcdSnapshot of a run, and deleting one
 * retention drops. A run's snapshot is named after its fire time and labelled with the
 * schedule's uid, so recover finds it by name and a repeated run finds it already there; a
 * snapshot by that name without the label is someone else's and is never touched.
 */
import type { EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { callOptions, deleteOrGone, readOrNull } from './_util.ts';
import { buildScheduledSnapshot, madeBy } from './build-scheduled-snapshot.ts';
import type { KubeContext } from './context.ts';
import { PLURAL } from './meta.ts';
import { customRef, readSnapshot } from './objects.ts';
import { createOwnSnapshot, recoverOwnSnapshot, type SnapshotResult } from './own-snapshot.ts';

export type { SnapshotResult };
/** Nothing to report. */
export type NoResult = Record<string, never>;

/** The schedule, checked to be the incarnation (uid) that asked; gone is a non-retryable ERR_SCHEDULE_GONE. */
async function requireSchedule(ctx: KubeContext, name: string, uid: string): Promise<EtcdSnapshotSchedule> {
  const schedule = (await readOrNull(ERR.READ_SCHEDULE, `reading EtcdSnapshotSchedule ${name}`, () =>
    ctx.kube.custom.getNamespacedCustomObject(customRef(ctx, PLURAL.schedule, name), callOptions(ctx.signal)),
  )) as EtcdSnapshotSchedule | null;
  if (!schedule || schedule.metadata.uid !== uid)
    throw new EffectError(
      ERR.SCHEDULE_GONE,
      `EtcdSnapshotSchedule ${ctx.cluster.namespace}/${name} (uid ${uid}) no longer exists`,
      { retryable: false },
    );
  return schedule;
}

/** Creates the EtcdSnapshot of a run; one this schedule made by that name counts as done. */
export const createScheduledSnapshot: IntentHandler<'createScheduledSnapshot', SnapshotResult, KubeContext> = {
  kind: 'createScheduledSnapshot',
  async run(params, ctx) {
    const schedule = await requireSchedule(ctx, params.schedule, params.scheduleUid);
    return createOwnSnapshot(
      ctx,
      buildScheduledSnapshot(schedule, params.name, params.scheduledAt, params.verify ?? false),
      {
        ours: (s) => madeBy(s, params.scheduleUid),
        whose: `one EtcdSnapshotSchedule ${params.schedule} made`,
      },
    );
  },
  recover: (params, ctx) => recoverOwnSnapshot(ctx, params.name, (s) => madeBy(s, params.scheduleUid)),
};

/**
 * Deletes an EtcdSnapshot of the schedule; its own finalizer then deletes what it stored (unless
 * Retain). One gone or already being deleted counts as done.
 */
export const deleteEtcdSnapshot: IntentHandler<'deleteEtcdSnapshot', NoResult, KubeContext> = {
  kind: 'deleteEtcdSnapshot',
  async run(params, ctx) {
    const snapshot = await readSnapshot(ctx, params.name);
    if (!snapshot || snapshot.metadata.deletionTimestamp) return {};
    if (!madeBy(snapshot, params.scheduleUid))
      throw new EffectError(
        ERR.DELETE_SNAPSHOT_FOREIGN,
        `EtcdSnapshot ${params.name} was not made by EtcdSnapshotSchedule ${params.schedule}`,
        { retryable: false },
      );
    // The uid precondition deletes exactly the snapshot read above, never a later one of that name.
    const body = { propagationPolicy: 'Background', preconditions: { uid: snapshot.metadata.uid } };
    await deleteOrGone(ERR.DELETE_SNAPSHOT, `deleting EtcdSnapshot ${params.name} (${params.reason})`, () =>
      ctx.kube.custom.deleteNamespacedCustomObject(
        { ...customRef(ctx, PLURAL.snapshot, params.name), body },
        callOptions(ctx.signal),
      ),
    );
    return {};
  },
  async recover(params, ctx): Promise<Recovered<NoResult>> {
    const snapshot = await readSnapshot(ctx, params.name);
    return !snapshot || snapshot.metadata.deletionTimestamp ? { done: true, result: {} } : { done: false };
  },
};

/** Every schedule handler, keyed by the intent kind it carries out. */
export const scheduleHandlers = { createScheduledSnapshot, deleteEtcdSnapshot } as const;
