/**
 * The cluster's PodDisruptionBudget: evictions (a node drain, a cluster upgrade) may take a
 * member Pod only while the others keep a quorum. It counts Pods by minAvailable, not
 * maxUnavailable: the disruption controller resolves maxUnavailable through the scale
 * subresource of each Pod's controller, and an EtcdMember has none.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { clusterLabels, ownedMeta } from './meta.ts';

/** The budget's name: the cluster's own, like its headless Service. */
export const disruptionBudgetName = (cluster: string): string => cluster;

/** `<cluster>`, owned by the EtcdCluster, over its member Pods (the Services' selector). */
export function buildDisruptionBudget(cluster: EtcdCluster, minAvailable: number): V1PodDisruptionBudget {
  const name = cluster.metadata.name ?? '';
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: ownedMeta(
      disruptionBudgetName(name),
      cluster.metadata.namespace ?? '',
      clusterLabels(name),
      cluster,
      cluster.spec.additionalMetadata,
    ),
    spec: { minAvailable, selector: { matchLabels: clusterLabels(name) } },
  };
}
