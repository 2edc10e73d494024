/**
 * What spec.tls puts in Pods: the Secrets as volumes, where they are mounted, and the etcd flags
 * and agent arguments that point at the files. The Secrets' contents never pass through here:
 * only their names, which the kubelet resolves.
 */
import type { V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { TLS_SECRET_KEYS, type EtcdCluster } from '../../api/v1alpha1/index.ts';
import { tlsSources } from './tls-sources.ts';

/** Where the members' client certificate is mounted in the etcd container. */
export const CLIENT_TLS_DIR = '/etc/etcd/tls/client';
/** Where the members' peer certificate is mounted in the etcd container. */
export const PEER_TLS_DIR = '/etc/etcd/tls/peer';
/** Where the operator's client certificate is mounted in an agent Job's container. */
export const OPERATOR_TLS_DIR = '/etc/etcd-operator/etcd-client';

/** Names of the TLS volumes, kept out of podTemplate's volumes like the data volume. */
export const TLS_VOLUME = { client: 'tls-client', peer: 'tls-peer', operator: 'tls-operator' } as const;

/** Whether the cluster's client and peer URLs are https (both fixed at creation). */
export function tlsOf(cluster: Pick<EtcdCluster, 'spec'> | undefined): { client: boolean; peer: boolean } {
  return { client: Boolean(cluster?.spec.tls?.client), peer: Boolean(cluster?.spec.tls?.peer) };
}

/**
 * A volume of exactly tls.crt, tls.key and ca.crt of a Secret. Listing the keys makes a Secret
 * that lacks one hold the Pod before any container starts (FailedMount), instead of letting etcd
 * start and crash on a missing file.
 */
export function tlsVolume(volume: string, secretName: string): V1Volume {
  return { name: volume, secret: { secretName, items: TLS_SECRET_KEYS.map((key) => ({ key, path: key })) } };
}

/** The files of a mounted TLS Secret. */
export const tlsFiles = (dir: string): { cert: string; key: string; ca: string } => ({
  cert: `${dir}/tls.crt`,
  key: `${dir}/tls.key`,
  ca: `${dir}/ca.crt`,
});

/** The etcd container's TLS volumes and mounts, one per plane that has TLS. */
export function memberTLSVolumes(cluster: EtcdCluster): { volumes: V1Volume[]; mounts: V1VolumeMount[] } {
  const { client, peer } = tlsSources(cluster);
  const planes = [
    ...(client ? [{ volume: TLS_VOLUME.client, secret: client.secret, dir: CLIENT_TLS_DIR }] : []),
    ...(peer ? [{ volume: TLS_VOLUME.peer, secret: peer.secret, dir: PEER_TLS_DIR }] : []),
  ];
  return {
    volumes: planes.map((p) => tlsVolume(p.volume, p.secret)),
    mounts: planes.map((p) => ({ name: p.volume, mountPath: p.dir, readOnly: true })),
  };
}

/** etcd's TLS flags: serving certificates, the CA client and peer certificates must be signed by, and both required. */
export function etcdTLSFlags(cluster: EtcdCluster): string[] {
  const { client, peer } = tlsOf(cluster);
  const c = tlsFiles(CLIENT_TLS_DIR);
  const p = tlsFiles(PEER_TLS_DIR);
  return [
    ...(client
      ? [`--cert-file=${c.cert}`, `--key-file=${c.key}`, `--trusted-ca-file=${c.ca}`, '--client-cert-auth']
      : []),
    ...(peer
      ? [
          `--peer-cert-file=${p.cert}`,
          `--peer-key-file=${p.key}`,
          `--peer-trusted-ca-file=${p.ca}`,
          '--peer-client-cert-auth',
        ]
      : []),
  ];
}

/**
 * What an agent Job's Pod needs to reach etcd of a cluster with client TLS: the operator's client
 * certificate as a volume, and the agent's arguments naming its files. Nothing without client TLS.
 */
export function agentEtcdTLS(cluster: EtcdCluster | undefined): {
  args: string[];
  volumes: V1Volume[];
  mounts: V1VolumeMount[];
} {
  const operator = cluster ? tlsSources(cluster).operator : undefined;
  if (!operator) return { args: [], volumes: [], mounts: [] };
  const f = tlsFiles(OPERATOR_TLS_DIR);
  return {
    args: [`--cacert=${f.ca}`, `--cert=${f.cert}`, `--key=${f.key}`],
    volumes: [tlsVolume(TLS_VOLUME.operator, operator.secret)],
    mounts: [{ name: TLS_VOLUME.operator, mountPath: OPERATOR_TLS_DIR, readOnly: true }],
  };
}
