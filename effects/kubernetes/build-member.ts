/** The EtcdMember object the cluster machine's createMember intent asks for. */
import type { CreateMemberParams } from '../../machines/types.ts';
import type { EtcdCluster, EtcdMember, SnapshotSource } from '../../api/v1alpha1/index.ts';
import { apiVersion } from '../../api/v1alpha1/index.ts';
import { DATA_GUARD_ANNOTATION, FINALIZER, memberLabels, ownedMeta } from './meta.ts';

/**
 * An EtcdMember owned by its cluster (controller, blocking the owner's deletion), with the
 * finalizer that makes it leave etcd first, the data guard's annotation, and a spec made of the
 * intent and the cluster's storage.
 */
export function buildEtcdMember(
  cluster: EtcdCluster,
  params: CreateMemberParams,
  restore?: SnapshotSource,
): EtcdMember {
  const clusterName = cluster.metadata.name ?? '';
  const meta = ownedMeta(
    params.member,
    cluster.metadata.namespace ?? '',
    memberLabels(clusterName, params.member),
    cluster,
    cluster.spec.additionalMetadata,
  );
  return {
    apiVersion,
    kind: 'EtcdMember',
    metadata: {
      ...meta,
      annotations: { ...meta.annotations, [DATA_GUARD_ANNOTATION]: 'v1' },
      finalizers: [FINALIZER],
    },
    spec: {
      cluster: clusterName,
      version: params.version,
      ...(params.trust !== undefined ? { trust: params.trust } : {}),
      storage: { ...cluster.spec.storage },
      bootstrap: params.bootstrap,
      initialCluster: params.initialCluster,
      ...(restore ? { restore } : {}),
      dormant: false,
    },
  };
}
