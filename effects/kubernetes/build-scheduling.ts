/**
 * Where member Pods may go. By default each member prefers a node no other member of its
 * cluster runs on, so a 3-member cluster on three nodes has one member per node and a node lost
 * takes one vote. Preferred, not required: with a node down, its replacement still finds a
 * place beside another member rather than staying Pending. The cluster's own affinity or spread
 * (spec or podTemplate) replaces the default entirely.
 */
import type { V1Affinity, V1PodSpec } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { LABEL } from './meta.ts';

/** The node label the default anti-affinity spreads members over. */
export const HOSTNAME_TOPOLOGY = 'kubernetes.io/hostname';

/** The default: members of one cluster prefer distinct nodes (weight 100, the most a preference weighs). */
export function defaultAffinity(cluster: string): V1Affinity {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            labelSelector: { matchLabels: { [LABEL.cluster]: cluster } },
            topologyKey: HOSTNAME_TOPOLOGY,
          },
        },
      ],
    },
  };
}

/** The scheduling fields of a member Pod: the cluster's when it sets any, else the default anti-affinity. */
export function scheduling(cluster: EtcdCluster, template: Partial<V1PodSpec>): Partial<V1PodSpec> {
  const { affinity, topologySpreadConstraints: spread } = cluster.spec;
  if (affinity || spread)
    return { ...(affinity ? { affinity } : {}), ...(spread ? { topologySpreadConstraints: spread } : {}) };
  if (template.affinity || template.topologySpreadConstraints) return {};
  return { affinity: defaultAffinity(cluster.metadata.name ?? '') };
}
