/**
 * A real S3-compatible server in the local cluster: a versitygw Pod behind a Service, its keys in
 * a Secret the snapshot Jobs read, and a bucket made through it (`make dev` and the snapshot tests).
 */
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { s3Client } from '../effects/s3/index.ts';
import type { clientsOf } from './clients.ts';
import { until } from './until.ts';

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
