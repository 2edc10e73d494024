/**
 * A cluster's TLS as docs/security.md tells users to bring it: one CA, a member certificate for
 * both planes (every member to come, the client Service, localhost and 127.0.0.1, from which
 * peers dial on the local cluster) and the operator's client certificate, as kubernetes.io/tls
 * Secrets named `<cluster>-client-tls`, `<cluster>-peer-tls` and `<cluster>-operator-tls`.
 */
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { credentialsOf, tlsSecret, type TestPki } from '../effects/etcd/test-pki.ts';
import type { Clients, ClusterTLS } from './etcd-cluster.ts';

/** What the Secrets give: the spec to create the cluster with, and how a test reaches it. */
export interface ClusterSecrets {
  readonly spec: NonNullable<EtcdCluster['spec']['tls']>;
  readonly reach: ClusterTLS;
}

/** Issues the certificates of cluster `name` in `ns` from `pki` and creates its three Secrets. */
export async function createClusterSecrets(
  kube: Clients,
  pki: TestPki,
  ns: string,
  name: string,
): Promise<ClusterSecrets> {
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
  for (const [secret, leaf] of [
    [`${name}-client-tls`, member],
    [`${name}-peer-tls`, member],
    [`${name}-operator-tls`, operator],
  ] as const)
    await kube.core.createNamespacedSecret({ namespace: ns, body: tlsSecret(secret, leaf, ns) });
  return {
    spec: {
      client: { secretRef: { name: `${name}-client-tls` }, operatorSecretRef: { name: `${name}-operator-tls` } },
      peer: { secretRef: { name: `${name}-peer-tls` } },
    },
    reach: { client: credentialsOf(operator), serverName: `${name}-client.${ns}.svc`, peer: true },
  };
}
