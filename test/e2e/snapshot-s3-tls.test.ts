/**
 * Snapshots to an S3 endpoint whose certificate a private CA signed (`caBundle`): versitygw
 * serving TLS with a certificate for its Service's name, issued by a CA made for the test. Without
 * the caBundle the Job refuses the endpoint; with it the snapshot is stored, and a cluster is
 * restored from it through the same endpoint. (A second versitygw in the Pod serves the same
 * directory over plain HTTP, for the test process to make the bucket.)
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { s3Client } from '../../effects/s3/index.ts';
import { issueCert, makeCa } from '../../localcluster/controlplane/certs.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { BUCKET, createSnapshot, S3_CREDENTIALS, snapshotFinished } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('s3-tls');
const { ns, kube } = env;

/** versitygw over TLS on 7443 (the Service `s3-tls`) and over HTTP on 7070, one directory. */
async function startTlsS3(pki: string): Promise<string> {
  await kube.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 's3-credentials' }, stringData: S3_CREDENTIALS },
  });
  await kube.core.createNamespacedSecret({
    namespace: ns,
    body: {
      metadata: { name: 's3-tls' },
      stringData: {
        'tls.crt': readFileSync(path.join(pki, 's3.crt'), 'utf8'),
        'tls.key': readFileSync(path.join(pki, 's3.key'), 'utf8'),
      },
    },
  });
  await kube.core.createNamespacedConfigMap({
    namespace: ns,
    body: { metadata: { name: 's3-ca' }, data: { 'ca.crt': readFileSync(path.join(pki, 'ca.crt'), 'utf8') } },
  });
  const fromSecret = (name: string) => ({ name, valueFrom: { secretKeyRef: { name: 's3-credentials', key: name } } });
  const env = [
    fromSecret('AWS_ACCESS_KEY_ID'),
    fromSecret('AWS_SECRET_ACCESS_KEY'),
    { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
  ];
  const keys = ['--access', '$(AWS_ACCESS_KEY_ID)', '--secret', '$(AWS_SECRET_ACCESS_KEY)'];
  const gateway = (name: string, extra: string[], port: number) => ({
    name,
    image: 'versity/versitygw:v1.8.0',
    command: ['/usr/local/bin/versitygw'],
    args: [...keys, ...extra, '--port', `$(POD_IP):${port}`, 'posix', '/data'],
    env,
    volumeMounts: [
      { name: 'data', mountPath: '/data' },
      { name: 'tls', mountPath: '/tls', readOnly: true },
    ],
  });
  await kube.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 's3-tls', labels: { app: 's3-tls' } },
      spec: {
        containers: [
          gateway('tls', ['--cert', '/tls/tls.crt', '--key', '/tls/tls.key'], 7443),
          gateway('plain', [], 7070),
        ],
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'tls', secret: { secretName: 's3-tls' } },
        ],
      },
    },
  });
  await kube.core.createNamespacedService({
    namespace: ns,
    body: {
      metadata: { name: 's3-tls' },
      spec: { selector: { app: 's3-tls' }, ports: [{ port: 7443, targetPort: 7443 }] },
    },
  });
  const ip = await until('the S3 Pod running', async () => {
    const pod = await kube.core.readNamespacedPod({ namespace: ns, name: 's3-tls' });
    return pod.status?.phase === 'Running' ? pod.status.podIP : undefined;
  });
  const plain = s3Client({
    endpoint: `http://${ip}:7070`,
    forcePathStyle: true,
    accessKeyId: S3_CREDENTIALS.AWS_ACCESS_KEY_ID,
    secretAccessKey: S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
  });
  await until('the bucket made', () => plain.send(new CreateBucketCommand({ Bucket: BUCKET })).then(() => true));
  plain.destroy();
  return `https://s3-tls.${ns}.svc:7443`;
}

const destination = (endpoint: string, ca: boolean) => ({
  s3: {
    endpoint,
    bucket: BUCKET,
    forcePathStyle: true,
    credentialsSecretRef: { name: 's3-credentials' },
    ...(ca ? { caBundle: { configMapName: 's3-ca' } } : {}),
  },
});

async function snapshot(name: string, dest: object): Promise<EtcdSnapshot> {
  await createSnapshot(kube, ns, name, { cluster: 'demo', destination: dest });
  return snapshotFinished(kube, ns, name);
}

describe.skipIf(!hasNode)('snapshots to an S3 endpoint signed by a private CA (caBundle)', () => {
  let endpoint = '';
  env.hooks();
  beforeAll(async () => {
    const pki = path.join(env.dir, 'pki');
    mkdirSync(pki, { recursive: true });
    await makeCa(pki);
    await issueCert(pki, { name: 's3', subject: '/CN=s3-tls', usage: 'serverAuth', sans: [`DNS:s3-tls.${ns}.svc`] });
    const demo = new ClusterUnderTest(kube, ns, 'demo');
    [endpoint] = await Promise.all([startTlsS3(pki), demo.create({ replicas: 1 })]);
    await demo.settled(1);
    await demo.write('tls-key', 20);
  });

  it('without the caBundle the Job refuses the endpoint, saying why', async () => {
    const s = await snapshot('untrusted', destination(endpoint, false));
    expect(s.status?.phase).toBe('Failed');
    expect(s.status?.conditions?.find((c) => c.type === 'Complete')?.message).toMatch(/certificate/i);
  });

  it('with the caBundle the snapshot is stored, and a cluster is restored from it through the same endpoint', async () => {
    const s = await snapshot('trusted', destination(endpoint, true));
    expect(s.status, JSON.stringify(s.status)).toMatchObject({ phase: 'Succeeded' });
    const restored = new ClusterUnderTest(kube, ns, 'restored');
    await restored.create({ replicas: 1, bootstrap: { restore: { snapshotName: 'trusted' } } });
    await restored.settled(1);
    expect(await restored.readBack('tls-key', 20)).toBe(20);
  });
});
