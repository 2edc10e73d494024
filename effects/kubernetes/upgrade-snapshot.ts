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
import { EffectError, type IntentHandler } from '../types.ts';
import type { KubeContext } from './context.ts';
import { LABEL } from './meta.ts';
import { readCluster } from './objects.ts';
import { createOwnSnapshot, recoverOwnSnapshot, type SnapshotResult } from './own-snapshot.ts';

/** The EtcdSnapshot's uid. */
export type UpgradeSnapshotResult = SnapshotResult;

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
    spec: {
      clusterRef: { name: p.cluster },
      destination: structuredClone(destination),
      deletionPolicy: 'Delete',
      verify: false,
    },
  };
}

/** Creates the roll's EtcdSnapshot; the one it made before counts as done. */
export const createUpgradeSnapshot: IntentHandler<'createUpgradeSnapshot', UpgradeSnapshotResult, KubeContext> = {
  kind: 'createUpgradeSnapshot',
  async run(params, ctx) {
    const made = await createOwnSnapshot(ctx, buildUpgradeSnapshot(await readCluster(ctx), params), {
      ours: (s) => ours(s, params),
      whose: `the snapshot of ${params.cluster}'s upgrade to ${params.version}`,
    });
    ctx.log.info({ snapshot: params.name, version: params.version }, 'snapshot before the upgrade taken or found');
    return made;
  },
  recover: (params, ctx) => recoverOwnSnapshot(ctx, params.name, (s) => ours(s, params)),
};
