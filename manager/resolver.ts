/**
 * Where the manager reaches a cluster's etcd members. In a cluster, by the names the headless
 * Service gives them (`<member>.<cluster>.<ns>.svc`); from outside one (`make dev`, the tests),
 * by their Pods' IPs, which the informers know.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../api/v1alpha1/index.ts';
import type { EtcdResolver } from '../effects/etcd/index.ts';
import { CLIENT_PORT, memberClientURL } from '../effects/kubernetes/build-services.ts';

/** `dns`: Service names; `pod-ip`: Pod IPs. */
export type EtcdAddressMode = 'dns' | 'pod-ip';

/** What the resolver reads: the informers' caches. */
export interface ResolverSource {
  members(namespace: string, cluster: string): readonly EtcdMember[];
  pod(namespace: string, name: string): V1Pod | undefined;
}

/** The resolver for `mode`. Dormant members (no Pod) and Pods without an IP are left out. */
export function etcdResolver(mode: EtcdAddressMode, source: ResolverSource): EtcdResolver {
  const byPod = (ns: string, member: string): string | undefined => {
    const ip = source.pod(ns, member)?.status?.podIP;
    return ip ? `http://${ip}:${CLIENT_PORT}` : undefined;
  };
  return (cluster) => {
    const members = source.members(cluster.namespace, cluster.name).filter((m) => !m.spec.dormant);
    const names = members.map((m) => m.metadata.name ?? '');
    const endpoints =
      mode === 'dns'
        ? names.map((m) => memberClientURL(cluster, m))
        : names.map((m) => byPod(cluster.namespace, m)).filter((u): u is string => u !== undefined);
    return {
      endpoints,
      clientURL: (member) =>
        mode === 'dns'
          ? memberClientURL(cluster, member)
          : (byPod(cluster.namespace, member) ?? memberClientURL(cluster, member)),
    };
  };
}
