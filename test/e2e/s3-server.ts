/**
 * A real S3-compatible server in the local cluster for snapshot tests: a versitygw Pod behind a
 * Service, its keys in a Secret the snapshot Jobs read, and a bucket made through it; and the
 * EtcdSnapshot a test takes and waits for.
 */
import { CreateBucketCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { s3Client } from '../../effects/s3/index.ts';
import { until, type clientsOf } from '../effects/kubernetes/e2e-context.ts';

/** The server's keys, also in the Secret `s3-credentials`. */
export const S3_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'snapshot-tests', AWS_SECRET_ACCESS_KEY: 'snapshot-tests-secret' };
/** The bucket snapshots go to. */
export const BUCKET = 'backups';

/** A running server: its Pod address (for the test process) and a client with the bucket made. */
export interface S3Server {
  readonly endpoint: string;
  readonly client: S3Client;
}

/** Starts the server in `ns` and makes the bucket; the namespace's deletion stops it. */
export async function startS3(kube: ReturnType<typeof clientsOf>, ns: string): Promise<S3Server> {
  await kube.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 's3-credentials' }, stringData: S3_CREDENTIALS },
  });
  const fromSecret = (name: string) => ({ name, valueFrom: { secretKeyRef: { name: 's3-credentials', key: name } } });
  await kube.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: 's3', labels: { app: 's3' } },
      spec: {
        containers: [
          {
            name: 'versitygw',
            image: 'versity/versitygw:v1.8.0',
            command: ['/usr/local/bin/versitygw'],
            args: [
              ...['--access', '$(AWS_ACCESS_KEY_ID)', '--secret', '$(AWS_SECRET_ACCESS_KEY)'],
              ...['--port', '$(POD_IP):7070', 'posix', '/data'],
            ],
            env: [
              fromSecret('AWS_ACCESS_KEY_ID'),
              fromSecret('AWS_SECRET_ACCESS_KEY'),
              { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
            ],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
      },
    },
  });
  await kube.core.createNamespacedService({
    namespace: ns,
    body: { metadata: { name: 's3' }, spec: { selector: { app: 's3' }, ports: [{ port: 7070, targetPort: 7070 }] } },
  });
  const ip = await until('the S3 Pod running', async () => {
    const pod = await kube.core.readNamespacedPod({ namespace: ns, name: 's3' });
    return pod.status?.phase === 'Running' ? pod.status.podIP : undefined;
  });
  const endpoint = `http://${ip}:7070`;
  const client = s3Client({
    endpoint,
    forcePathStyle: true,
    accessKeyId: S3_CREDENTIALS.AWS_ACCESS_KEY_ID,
    secretAccessKey: S3_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
  });
  await until('the S3 server answering', () =>
    client.send(new CreateBucketCommand({ Bucket: BUCKET })).then(() => true),
  );
  return { endpoint, client };
}

/** An EtcdSnapshot destination on the server, as the Jobs in `ns` reach it (through its Service). */
export const s3Destination = (ns: string, keyPrefix = 'etcd/') => ({
  s3: {
    endpoint: `http://s3.${ns}.svc:7070`,
    bucket: BUCKET,
    keyPrefix,
    forcePathStyle: true,
    credentialsSecretRef: { name: 's3-credentials' },
  },
});

/** The keys in the bucket under `prefix`. */
export async function listKeys(client: S3Client, prefix: string): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '');
}

/** Creates an EtcdSnapshot of `cluster` in `ns` to `destination` (with `extra` spec fields). */
export async function createSnapshot(
  kube: ReturnType<typeof clientsOf>,
  ns: string,
  name: string,
  spec: { readonly cluster: string; readonly destination: object; readonly extra?: object },
): Promise<void> {
  await kube.custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns,
    plural: PLURAL.snapshot,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'EtcdSnapshot',
      metadata: { name },
      spec: { clusterRef: { name: spec.cluster }, destination: spec.destination, ...spec.extra },
    },
  });
}

/** Waits until the EtcdSnapshot is Succeeded or Failed (within timeoutMs); returns it. */
export function snapshotFinished(
  kube: ReturnType<typeof clientsOf>,
  ns: string,
  name: string,
  timeoutMs = Infinity,
): Promise<EtcdSnapshot> {
  const ref = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot, name };
  return until(
    `EtcdSnapshot ${name} finished`,
    async () => {
      const s = (await kube.custom.getNamespacedCustomObject(ref)) as EtcdSnapshot;
      return s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed' ? s : undefined;
    },
    timeoutMs,
  );
}

/** Waits until the EtcdSnapshot's Verified condition is True or False (within timeoutMs); returns the snapshot. */
export function snapshotVerified(
  kube: ReturnType<typeof clientsOf>,
  ns: string,
  name: string,
  timeoutMs = Infinity,
): Promise<EtcdSnapshot> {
  const ref = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot, name };
  return until(
    `EtcdSnapshot ${name} verified or not`,
    async () => {
      const s = (await kube.custom.getNamespacedCustomObject(ref)) as EtcdSnapshot;
      const v = s.status?.conditions?.find((c) => c.type === 'Verified');
      return v && v.status !== 'Unknown' ? s : undefined;
    },
    timeoutMs,
  );
}
