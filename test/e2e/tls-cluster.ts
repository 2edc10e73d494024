/**
 * A cluster's TLS as docs/security.md tells users to bring it: one CA, a member certificate for
 * both planes (every member to come, the client Service, localhost and 127.0.0.1, from which
 * peers dial on the local cluster) and the operator's client certificate, as kubernetes.io/tls
 * Secrets named `<cluster>-client-tls`, `<cluster>-peer-tls` and `<cluster>-operator-tls`.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import type { EtcdClientTLS } from '../../effects/etcd/index.ts';
import { credentialsOf, tlsSecret, type Leaf, type TestPki } from '../effects/etcd/test-pki.ts';
import type { Clients, ClusterTLS } from './etcd-cluster.ts';

/** What the Secrets give: the spec to create the cluster with, and how a test reaches it. */
export interface ClusterSecrets {
  readonly spec: NonNullable<EtcdCluster['spec']['tls']>;
  readonly reach: ClusterTLS;
}

/** The leaves of cluster `name` in `ns`: the members' (both planes) and the operator's. */
async function issueLeaves(pki: TestPki, ns: string, name: string): Promise<{ member: Leaf; operator: Leaf }> {
  const member = await pki.issue({
    name: `${ns}-${name}-member`,
    subject: `/CN=${name}-member`,
    usage: 'serverAuth,clientAuth',
    sans: [
      `DNS:*.${name}.${ns}.svc`,
      `DNS:*.${name}.${ns}.svc.cluster.local`,
      `DNS:${name}-client.${ns}.svc`,
      `DNS:${name}-client.${ns}.svc.cluster.local`,
      'DNS:localhost',
      'IP:127.0.0.1',
    ],
  });
  const operator = await pki.issue({
    name: `${ns}-${name}-operator`,
    subject: '/CN=etcd-operator',
    usage: 'clientAuth',
  });
  return { member, operator };
}

/** The Secrets of cluster `name` and the leaf each holds. */
const secretsOf = (name: string, leaves: { member: Leaf; operator: Leaf }): [string, Leaf][] => [
  [`${name}-client-tls`, leaves.member],
  [`${name}-peer-tls`, leaves.member],
  [`${name}-operator-tls`, leaves.operator],
];

/** Issues the certificates of cluster `name` in `ns` from `pki` and creates its three Secrets. */
export async function createClusterSecrets(
  kube: Clients,
  pki: TestPki,
  ns: string,
  name: string,
): Promise<ClusterSecrets> {
  const leaves = await issueLeaves(pki, ns, name);
  for (const [secret, leaf] of secretsOf(name, leaves))
    await kube.core.createNamespacedSecret({ namespace: ns, body: tlsSecret(secret, leaf, ns) });
  return {
    spec: {
      client: { secretRef: { name: `${name}-client-tls` }, operatorSecretRef: { name: `${name}-operator-tls` } },
      peer: { secretRef: { name: `${name}-peer-tls` } },
    },
    reach: { client: credentialsOf(leaves.operator), serverName: `${name}-client.${ns}.svc`, peer: true },
  };
}

/**
 * Renews the certificates of cluster `name` as a user renewing by hand does: new leaves from the
 * same CA written over the three Secrets. Resolves to the new member certificate's serial.
 */
export async function renewClusterSecrets(kube: Clients, pki: TestPki, ns: string, name: string): Promise<string> {
  const leaves = await issueLeaves(pki, ns, name);
  for (const [secret, leaf] of secretsOf(name, leaves))
    await kube.core.replaceNamespacedSecret({ name: secret, namespace: ns, body: tlsSecret(secret, leaf, ns) });
  return serialOf(readFileSync(leaves.member.cert, 'utf8'));
}

/** A serial number as both node:tls and node:crypto print it, compared without leading zeros. */
const serial = (s: string): string => s.toUpperCase().replace(/^0+/, '');

/** The serial of a PEM certificate. */
export const serialOf = (pem: string | Buffer): string => serial(new X509Certificate(pem).serialNumber);

/**
 * The serial of the certificate a member serves on `port`, read from a TLS handshake with a
 * client certificate (both ports ask for one). The connection is closed at once: etcd's own
 * checks after the handshake (the peer port's address check) do not matter here.
 */
export function servedSerial(host: string, port: number, creds: EtcdClientTLS): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host,
      port,
      ca: creds.ca,
      cert: creds.cert,
      key: creds.key,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error(`no TLS handshake with ${host}:${port} in 5 s`)));
    socket.once('secureConnect', () => {
      const served = socket.getPeerCertificate().serialNumber;
      socket.destroy();
      resolve(serial(served));
    });
    socket.once('error', reject);
  });
}
