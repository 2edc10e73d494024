/**
 * resolveRecoverySnapshot: which EtcdSnapshot a recovery from a snapshot restores. Read only:
 * the one named, or the newest Succeeded snapshot of the cluster whose verification did not
 * fail. None that may be restored is a non-retryable failure, which the cluster machine turns
 * into a refusal with nothing changed. Recover reads again: nothing was changed by a run.
 */
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { ConditionType } from '../../api/conditions.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { apiError, callOptions } from './_util.ts';
import { storedAt } from './build-snapshot-job.ts';
import type { KubeContext } from './context.ts';
import { GROUP, PLURAL, VERSION } from './meta.ts';
import { readSnapshot } from './objects.ts';

/** The snapshot found: its name, the cluster it is of, its revision, where it is and when it was stored. */
export type RecoverySnapshotResult = {
  readonly name: string;
  readonly cluster: string;
  readonly revision: number;
  readonly location: string;
  readonly completionTime: string;
};

/** Why a snapshot cannot be restored (not Succeeded, nothing stored, its verification failed), or null. */
export function unusable(s: EtcdSnapshot): string | null {
  const name = s.metadata.name ?? '';
  if (s.status?.phase !== 'Succeeded' || !s.status.sha256)
    return `EtcdSnapshot ${name} is ${s.status?.phase ?? 'Pending'}, not Succeeded: only a snapshot stored and checked can be restored`;
  const verified = s.status.conditions?.find((c) => c.type === ConditionType.Verified);
  if (verified?.status === 'False')
    return `EtcdSnapshot ${name} failed its verification (${verified.reason}: ${verified.message})`;
  return null;
}

/** The newest usable snapshot of `cluster` (by completion time, then revision), or undefined. */
export function newestUsable(snapshots: readonly EtcdSnapshot[], cluster: string): EtcdSnapshot | undefined {
  return snapshots
    .filter((s) => s.spec.clusterRef.name === cluster && !s.metadata.deletionTimestamp && unusable(s) === null)
    .sort(
      (a, b) =>
        (b.status?.completionTime ?? '').localeCompare(a.status?.completionTime ?? '') ||
        (b.status?.revision ?? 0) - (a.status?.revision ?? 0),
    )[0];
}

const refuse = (message: string): EffectError => new EffectError(ERR.RECOVERY_SNAPSHOT, message, { retryable: false });

/** The snapshot as the cluster machine records it. */
const resultOf = (s: EtcdSnapshot): RecoverySnapshotResult => ({
  name: s.metadata.name ?? '',
  cluster: s.spec.clusterRef.name,
  revision: s.status?.revision ?? 0,
  location: s.status?.location ?? storedAt(s).location,
  completionTime: s.status?.completionTime ?? '',
});

/** Finds the snapshot; a missing or unusable one is refused (non-retryable), an API error retried. */
export const resolveRecoverySnapshot: IntentHandler<'resolveRecoverySnapshot', RecoverySnapshotResult, KubeContext> = {
  kind: 'resolveRecoverySnapshot',
  async run(params, ctx) {
    const namespace = ctx.cluster.namespace;
    if (params.snapshotName !== undefined) {
      const named = await readSnapshot(ctx, params.snapshotName);
      if (!named || named.metadata.deletionTimestamp)
        throw refuse(
          `EtcdSnapshot ${namespace}/${params.snapshotName}, named by spec.recovery.snapshotName, does not exist`,
        );
      const why = unusable(named);
      if (why) throw refuse(why);
      return resultOf(named);
    }
    let items: EtcdSnapshot[];
    try {
      const list = (await ctx.kube.custom.listNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace, plural: PLURAL.snapshot },
        callOptions(ctx.signal),
      )) as { items: EtcdSnapshot[] };
      items = list.items;
    } catch (err) {
      throw apiError(ERR.READ_SNAPSHOT, `listing the EtcdSnapshots of ${namespace}`, err);
    }
    const newest = newestUsable(items, params.cluster);
    if (!newest)
      throw refuse(
        `no EtcdSnapshot of EtcdCluster ${params.cluster} in ${namespace} is Succeeded without a failed verification: there is no snapshot to recover from`,
      );
    return resultOf(newest);
  },
  recover(): Promise<Recovered<RecoverySnapshotResult>> {
    // A read changes nothing: run it again.
    return Promise.resolve({ done: false });
  },
};
