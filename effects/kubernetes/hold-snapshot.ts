/**
 * holdSnapshot and releaseSnapshotHold: the finalizer an EtcdCluster puts on the EtcdSnapshot it
 * restores from (meta.ts holdFinalizer), as Kubernetes protects a PVC a Pod uses. While it is on,
 * the snapshot machine keeps what the EtcdSnapshot stored even when it is deleted. The API server
 * adds no finalizer to an object being deleted, so a hold either lands before a deletion (which
 * then sees it) or is refused: an EtcdSnapshot gone or being deleted is ERR_SNAPSHOT_GONE, not retried.
 */
import { ERR } from '../../machines/error-codes.ts';
import type { SnapshotHoldParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import type { KubeContext } from './context.ts';
import { changeFinalizer, hasFinalizer } from './finalizers.ts';
import { holdFinalizer, PLURAL } from './meta.ts';
import { requireSnapshot } from './objects.ts';

/** Nothing to report. */
type NoResult = Record<string, never>;

const holdOf = (p: SnapshotHoldParams, add: boolean) =>
  ({
    plural: PLURAL.snapshot,
    name: p.snapshot,
    finalizer: holdFinalizer(p.cluster),
    add,
    code: add ? ERR.ADD_FINALIZER : ERR.RELEASE_FINALIZER,
    what: `EtcdSnapshot ${p.snapshot}`,
  }) as const;

/** Whether the cluster's hold is on the EtcdSnapshot; null when it is gone. */
const held = (ctx: KubeContext, p: SnapshotHoldParams): Promise<boolean | null> =>
  hasFinalizer(ctx, { ...holdOf(p, true), code: ERR.READ_SNAPSHOT });

/** Puts the cluster's hold on the EtcdSnapshot; one gone or being deleted cannot be held (not retried). */
export const holdSnapshot: IntentHandler<'holdSnapshot', NoResult, KubeContext> = {
  kind: 'holdSnapshot',
  async run(params, ctx) {
    const snapshot = await requireSnapshot(ctx, params.snapshot);
    const finalizer = holdFinalizer(params.cluster);
    if (snapshot.metadata.deletionTimestamp && !(snapshot.metadata.finalizers ?? []).includes(finalizer))
      throw new EffectError(
        ERR.SNAPSHOT_GONE,
        `EtcdSnapshot ${ctx.cluster.namespace}/${params.snapshot} is being deleted, its stored file with it`,
        { retryable: false },
      );
    await changeFinalizer(ctx, holdOf(params, true), ERR.SNAPSHOT_GONE);
    return {};
  },
  async recover(params, ctx): Promise<Recovered<NoResult>> {
    return (await held(ctx, params)) ? { done: true, result: {} } : { done: false };
  },
};

/** Takes the cluster's hold off; an EtcdSnapshot that is gone, or not held, counts as done. */
export const releaseSnapshotHold: IntentHandler<'releaseSnapshotHold', NoResult, KubeContext> = {
  kind: 'releaseSnapshotHold',
  async run(params, ctx) {
    await changeFinalizer(ctx, holdOf(params, false), ERR.SNAPSHOT_GONE);
    return {};
  },
  async recover(params, ctx): Promise<Recovered<NoResult>> {
    return (await held(ctx, params)) ? { done: false } : { done: true, result: {} };
  },
};
