/**
 * Where the manager reaches a cluster's etcd members. In a cluster, by the names the headless
 * Service gives them (`<member>.<cluster>.<ns>.svc`); from outside one (`make dev`, the tests),
 * by their Pods' IPs, which the informers know, checking each member's certificate against its
 * name all the same. With client TLS, https and the operator's client certificate.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember } from '../api/v1alpha1/index.ts';
import type { EtcdClientTLS, EtcdResolver } from '../effects/etcd/index.ts';
import { CLIENT_PORT, memberClientURL, memberHost } from '../effects/kubernetes/build-services.ts';

/** `dns`: Service names; `pod-ip`: Pod IPs. */
export type EtcdAddressMode = 'dns' | 'pod-ip';

/** What the resolver reads: the informers' caches, and the operator's client certificates. */
export interface ResolverSource {
  members(namespace: string, cluster: string): readonly EtcdMember[];
  pod(namespace: string, name: string): V1Pod | undefined;
  /** The EtcdCluster (its spec.tls says whether members serve https). */
  cluster?(namespace: string, name: string): EtcdCluster | undefined;
  /** The operator's client certificate for a cluster, by uid, or why there is none. */
  credentials?(uid: string): { readonly tls?: EtcdClientTLS; readonly problem?: string } | undefined;
}

/** The resolver for `mode`. Dormant members (no Pod) and Pods without an IP are left out. */
export function etcdResolver(mode: EtcdAddressMode, source: ResolverSource): EtcdResolver {
  return (cluster) => {
    const tls = Boolean(source.cluster?.(cluster.namespace, cluster.name)?.spec.tls?.client);
    const byPod = (member: string): string | undefined => {
      const ip = source.pod(cluster.namespace, member)?.status?.podIP;
      return ip ? `${tls ? 'https' : 'http'}://${ip}:${CLIENT_PORT}` : undefined;
    };
    const members = source.members(cluster.namespace, cluster.name).filter((m) => !m.spec.dormant);
    const names = members.map((m) => m.metadata.name ?? '');
    const endpoints =
      mode === 'dns'
        ? names.map((m) => memberClientURL(cluster, m, tls))
        : names.map((m) => byPod(m)).filter((u): u is string => u !== undefined);
    const credentials = tls ? source.credentials?.(cluster.uid) : undefined;
    // By Pod IP, a member's certificate is checked against its name, which it covers, not the IP.
    const serverName = (url: string): string | undefined => {
      const member = names.find((m) => byPod(m) === url);
      return member === undefined ? undefined : memberHost(cluster, member);
    };
    return {
      endpoints,
      clientURL: (member) => (mode === 'pod-ip' ? byPod(member) : undefined) ?? memberClientURL(cluster, member, tls),
      ...(credentials?.tls ? { tls: credentials.tls } : {}),
      ...(tls && !credentials?.tls ? { tlsProblem: credentials?.problem ?? 'its Secret was not read yet' } : {}),
      ...(tls && mode === 'pod-ip' ? { serverName } : {}),
    };
  };
}
