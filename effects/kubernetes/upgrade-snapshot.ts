/**
 * createUpgradeSnapshot: the EtcdSnapshot a rolling upgrade takes before its first member
 * restarts, to the cluster's spec.upgrade.snapshot destination. Labelled with the cluster and
 * the version rolled to, so recover finds it by name and a snapshot by that name without the
 * labels (someone else's) is never taken for it. No owner reference: it is the way back, and
 * outlives the cluster.
 */
import type { EtcdCluster, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { apiVersion } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import type { CreateUpgradeSnapshotParams } from '../../machines/intents.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { apiError, callOptions, isConflict } from './_util.ts';
import type { KubeContext } from './context.ts';
import { LABEL, PLURAL } from './meta.ts';
import { customRef, readCluster, readSnapshot } from './objects.ts';

/** The EtcdSnapshot's uid. */
export type UpgradeSnapshotResult = { readonly uid: string };

/** Whether the snapshot is the one a roll of `cluster` to `version` takes. */
const ours = (s: Pick<EtcdSnapshot, 'metadata'>, p: CreateUpgradeSnapshotParams): boolean =>
  s.metadata.labels?.[LABEL.cluster] === p.cluster && s.metadata.labels[LABEL.upgradeTo] === p.version;

/** The EtcdSnapshot to create, from the cluster's spec.upgrade.snapshot. */
export function buildUpgradeSnapshot(cluster: EtcdCluster, p: CreateUpgradeSnapshotParams): EtcdSnapshot {
  const destination = cluster.spec.upgrade?.snapshot?.destination;
  if (!destination)
    throw new EffectError(ERR.CREATE_SNAPSHOT, `EtcdCluster ${p.cluster} no longer sets spec.upgrade.snapshot`);
  return {
    apiVersion,
    kind: 'EtcdSnapshot',
    metadata: {
      name: p.name,
      namespace: cluster.metadata.namespace ?? '',
      labels: { [LABEL.managedBy]: 'etcd-operator', [LABEL.cluster]: p.cluster, [LABEL.upgradeTo]: p.version },
    },
    spec: { clusterRef: { name: p.cluster }, destination: structuredClone(destination), deletionPolicy: 'Delete' },
  };
}

/** Creates the roll's EtcdSnapshot; the one it made before counts as done. */
export const createUpgradeSnapshot: IntentHandler<'createUpgradeSnapshot', UpgradeSnapshotResult, KubeContext> = {
  kind: 'createUpgradeSnapshot',
  async run(params, ctx) {
    const body = buildUpgradeSnapshot(await readCluster(ctx), params);
    const what = `EtcdSnapshot ${ctx.cluster.namespace}/${params.name}`;
    try {
      const made = (await ctx.kube.custom.createNamespacedCustomObject(
        { ...customRef(ctx, PLURAL.snapshot, params.name), body },
        callOptions(ctx.signal),
      )) as EtcdSnapshot;
      ctx.log.info({ snapshot: params.name, version: params.version }, 'snapshot before the upgrade created');
      return { uid: made.metadata.uid ?? '' };
    } catch (err) {
      if (!isConflict(err)) throw apiError(ERR.CREATE_SNAPSHOT, `creating ${what}`, err);
    }
    const existing = await readSnapshot(ctx, params.name);
    if (!existing) throw new EffectError(ERR.CREATE_SNAPSHOT, `${what} was there and is gone now; retrying creates it`);
    if (!ours(existing, params))
      throw new EffectError(
        ERR.CREATE_SNAPSHOT_FOREIGN,
        `${what} exists and is not the snapshot of ${params.cluster}'s upgrade to ${params.version}: delete or rename it`,
        { retryable: false },
      );
    return { uid: existing.metadata.uid ?? '' };
  },
  async recover(params, ctx): Promise<Recovered<UpgradeSnapshotResult>> {
    const existing = await readSnapshot(ctx, params.name);
    return existing && ours(existing, params)
      ? { done: true, result: { uid: existing.metadata.uid ?? '' } }
      : { done: false };
  },
};
