/**
 * The two Services of a cluster: the headless one that gives each member Pod its DNS name
 * `<member>.<cluster>.<ns>.svc` (peer URLs use it), and the client one that spreads clients.
 */
import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { clientServiceName, clusterLabels, ownedMeta } from './meta.ts';

/** etcd's client port. */
export const CLIENT_PORT = 2379;
/** A member's DNS name under the cluster's headless Service (what its certificates must cover). */
export const memberHost = (cluster: { readonly namespace: string; readonly name: string }, member: string): string =>
  `${member}.${cluster.name}.${cluster.namespace}.svc`;
/** A member's client URL: its DNS name, https when the cluster has client TLS. */
export const memberClientURL = (
  cluster: { readonly namespace: string; readonly name: string },
  member: string,
  tls = false,
): string => `${tls ? 'https' : 'http'}://${memberHost(cluster, member)}:${CLIENT_PORT}`;
/** etcd's peer port. */
export const PEER_PORT = 2380;
/** etcd's metrics and health port (--listen-metrics-urls). */
export const METRICS_PORT = 2381;

const ports: V1ServicePort[] = [
  { name: 'client', port: CLIENT_PORT, targetPort: CLIENT_PORT, protocol: 'TCP' },
  { name: 'peer', port: PEER_PORT, targetPort: PEER_PORT, protocol: 'TCP' },
];

/**
 * The headless Service named after the cluster. It publishes not-ready Pods: a member must be
 * reachable by name before it is ready, or a learner could never join.
 */
export function buildHeadlessService(cluster: EtcdCluster): V1Service {
  const name = cluster.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMeta(
      name,
      cluster.metadata.namespace ?? '',
      clusterLabels(name),
      cluster,
      cluster.spec.additionalMetadata,
    ),
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: clusterLabels(name),
      ports: ports.map((p) => ({ ...p })),
    },
  };
}

/** The client Service `<cluster>-client`: a ClusterIP over ready members, client port only. */
export function buildClientService(cluster: EtcdCluster): V1Service {
  const name = cluster.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: ownedMeta(
      clientServiceName(name),
      cluster.metadata.namespace ?? '',
      clusterLabels(name),
      cluster,
      cluster.spec.additionalMetadata,
    ),
    spec: {
      type: 'ClusterIP',
      selector: clusterLabels(name),
      ports: [{ name: 'client', port: CLIENT_PORT, targetPort: CLIENT_PORT, protocol: 'TCP' }],
    },
  };
}
