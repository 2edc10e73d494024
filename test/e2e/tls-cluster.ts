/**
 * A cluster's TLS as docs/security.md tells users to bring it: one CA, a member certificate for
 * both planes (every member to come, the client Service, localhost and 127.0.0.1, from which
 * peers dial on the local cluster) and the operator's client certificate, as kubernetes.io/tls
 * Secrets named `<cluster>-client-tls`, `<cluster>-peer-tls` and `<cluster>-operator-tls`.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import type { EtcdClientTLS } from '../../effects/etcd/index.ts';
import { LABEL, TRUST_ANNOTATION } from '../../effects/kubernetes/meta.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { credentialsOf, tlsSecret, type Leaf, type TestPki } from '../effects/etcd/test-pki.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import type { Clients, ClusterTLS, ClusterUnderTest } from './etcd-cluster.ts';

const exec = promisify(execFile);

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
const secretsOf = <L>(name: string, leaves: { member: L; operator: L }): [string, L][] => [
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

/** A Secret of `leaf` whose ca.crt is `ca` (PEM: one CA or a bundle) instead of the leaf's CA. */
function secretWithCA(name: string, leaf: Leaf, ns: string, ca: string | undefined): V1Secret {
  const secret = tlsSecret(name, leaf, ns);
  return ca === undefined
    ? secret
    : { ...secret, data: { ...secret.data, 'ca.crt': Buffer.from(ca).toString('base64') } };
}

/**
 * Renews the certificates of cluster `name` as a user renewing by hand does: new leaves from
 * `pki` written over the three Secrets, with `ca` as their ca.crt when given (a bundle of the old
 * and the new CA, during a CA change). Resolves to the new member certificate's serial.
 */
export async function renewClusterSecrets(
  kube: Clients,
  pki: TestPki,
  ns: string,
  name: string,
  ca?: string,
): Promise<string> {
  const leaves = await issueLeaves(pki, ns, name);
  for (const [secret, leaf] of secretsOf(name, leaves))
    await kube.core.replaceNamespacedSecret({ name: secret, namespace: ns, body: secretWithCA(secret, leaf, ns, ca) });
  return serialOf(readFileSync(leaves.member.cert, 'utf8'));
}

/** Writes `ca` (PEM: one CA or a bundle) as ca.crt of the three Secrets of cluster `name`, keeping their leaves. */
export async function writeClusterCA(kube: Clients, ns: string, name: string, ca: string): Promise<void> {
  for (const [secret] of secretsOf(name, { member: undefined, operator: undefined })) {
    const found = await kube.core.readNamespacedSecret({ name: secret, namespace: ns });
    const data = { ...found.data, 'ca.crt': Buffer.from(ca).toString('base64') };
    await kube.core.replaceNamespacedSecret({ name: secret, namespace: ns, body: { ...found, data } });
  }
}

/**
 * Waits until cluster `name` rolled onto a CA digest other than `from`: every one of its
 * `replicas` EtcdMembers names the same new spec.trust, each member's Pod was made with it
 * (its trust annotation) and is ready, and the operator reports it settled. Resolves to the digest.
 */
export async function trustRolled(
  cut: ClusterUnderTest,
  core: Clients['core'],
  from: string | undefined,
  replicas: number,
  timeoutMs: number,
): Promise<string> {
  let seen = '';
  const digest = await until(
    `${cut.name}'s members restarted onto CAs other than digest ${from}`,
    async () => {
      const members = (await cut.members()).filter((m) => !m.metadata.deletionTimestamp);
      const pods = (
        await core.listNamespacedPod({ namespace: cut.namespace, labelSelector: `${LABEL.cluster}=${cut.name}` })
      ).items;
      seen = members
        .map((m) => {
          const pod = pods.find((p) => p.metadata?.name === m.metadata.name);
          const ready = pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
          return `${m.metadata.name}: ${m.spec.trust} (Pod ${pod?.metadata?.annotations?.[TRUST_ANNOTATION]}${ready ? ', ready' : ''})`;
        })
        .join('; ');
      const trust = members[0]?.spec.trust;
      const done =
        members.length === replicas &&
        trust !== undefined &&
        trust !== from &&
        members.every((m) => {
          const pod = pods.find((p) => p.metadata?.name === m.metadata.name);
          return (
            m.spec.trust === trust &&
            pod?.metadata?.annotations?.[TRUST_ANNOTATION] === trust &&
            !pod.metadata.deletionTimestamp &&
            pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          );
        });
      return done ? trust : undefined;
    },
    timeoutMs,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; members: ${seen}`);
  });
  await cut.settled(replicas, timeoutMs);
  return digest;
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

/** etcdctl 3.6.16 against `endpoint` (https with `--cacert --cert --key` in `args`): its output, or the error it exited with. */
export async function etcdctl(endpoint: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  const bin = await binary('etcdctl', '3.6.16');
  try {
    const { stdout, stderr } = await exec(bin, [`--endpoints=${endpoint}`, '--dial-timeout=3s', ...args], {
      timeout: 20_000,
    });
    return { ok: true, out: stdout + stderr };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    return { ok: false, out: `${err.stdout ?? ''}${err.stderr ?? err.message}` };
  }
}
