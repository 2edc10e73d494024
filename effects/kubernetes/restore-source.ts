/** The snapshot an EtcdCluster is to be restored from, resolved to where it is stored. */
import type { EtcdCluster, SnapshotSource } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { sourceOf } from './build-restore.ts';
import type { KubeContext } from './context.ts';
import { readSnapshot } from './objects.ts';

/**
 * Where the cluster's bootstrap.restore snapshot is: the source it names, or the stored object of
 * the EtcdSnapshot it names (which must be Succeeded); undefined for a cluster that starts empty.
 */
export async function restoreSource(ctx: KubeContext, cluster: EtcdCluster): Promise<SnapshotSource | undefined> {
  const restore = cluster.spec.bootstrap?.restore;
  if (!restore) return undefined;
  if (restore.source) return restore.source;
  const name = restore.snapshotName ?? '';
  const snapshot = await readSnapshot(ctx, name);
  if (!snapshot)
    throw new EffectError(
      ERR.RESTORE_SOURCE,
      `EtcdSnapshot ${ctx.cluster.namespace}/${name}, named by spec.bootstrap.restore.snapshotName, does not exist`,
    );
  return sourceOf(snapshot);
}
