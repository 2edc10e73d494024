/**
 * The snapshot tests' side of the local cluster's S3-compatible server (localcluster/s3-server.ts):
 * where the Jobs reach it, what the bucket holds, and the EtcdSnapshot a test takes and waits for.
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import type { clientsOf } from '../../localcluster/clients.ts';
import { BUCKET } from '../../localcluster/s3-server.ts';
import { until } from '../../localcluster/until.ts';

export { BUCKET, S3_CREDENTIALS, startS3 } from '../../localcluster/s3-server.ts';

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

/** A wait for the EtcdSnapshot `name` in `ns` (within timeoutMs), returning it. */
type SnapshotWait = (
  kube: ReturnType<typeof clientsOf>,
  ns: string,
  name: string,
  timeoutMs?: number,
) => Promise<EtcdSnapshot>;

/** Waits until the EtcdSnapshot is Succeeded or Failed (within timeoutMs); returns it. */
export const snapshotFinished: SnapshotWait = (kube, ns, name, timeoutMs = Infinity) =>
  snapshotWhen(
    kube,
    ns,
    name,
    'finished',
    timeoutMs,
    (s) => s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed',
  );

/** Waits until the EtcdSnapshot's Verified condition is True or False (within timeoutMs); returns the snapshot. */
export const snapshotVerified: SnapshotWait = (kube, ns, name, timeoutMs = Infinity) =>
  snapshotWhen(kube, ns, name, 'verified or not', timeoutMs, (s) => {
    const v = s.status?.conditions?.find((c) => c.type === 'Verified');
    return v !== undefined && v.status !== 'Unknown';
  });

/** Reads the EtcdSnapshot until `done` holds of it (within timeoutMs, said as `what`); returns it. */
function snapshotWhen(
  kube: ReturnType<typeof clientsOf>,
  ns: string,
  name: string,
  what: string,
  timeoutMs: number,
  done: (s: EtcdSnapshot) => boolean,
): Promise<EtcdSnapshot> {
  const ref = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot, name };
  return until(
    `EtcdSnapshot ${name} ${what}`,
    async () => {
      const s = (await kube.custom.getNamespacedCustomObject(ref)) as EtcdSnapshot;
      return done(s) ? s : undefined;
    },
    timeoutMs,
  );
}
