/**
 * The snapshot tests' side of the local cluster's S3-compatible server (localcluster/s3-server.ts):
 * where the Jobs reach it, what the bucket holds, the EtcdSnapshot a test takes and waits for, and
 * a restore from one abandoned midway.
 */
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, holdFinalizer, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import type { clientsOf } from '../../localcluster/clients.ts';
import { BUCKET } from '../../localcluster/s3-server.ts';
import { until, untilGone } from '../../localcluster/until.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';

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
  return until(
    `EtcdSnapshot ${name} ${what}`,
    async () => {
      const s = await readSnapshot(kube, ns, name);
      return done(s) ? s : undefined;
    },
    timeoutMs,
  );
}

/** The EtcdSnapshot `name` in `ns`, as stored. */
const readSnapshot = async (kube: ReturnType<typeof clientsOf>, ns: string, name: string): Promise<EtcdSnapshot> =>
  (await kube.custom.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns,
    plural: PLURAL.snapshot,
    name,
  })) as EtcdSnapshot;

/**
 * A restore abandoned: under a quota of no new Pods in `ns` (so the restore's check Job waits for
 * ever), EtcdCluster `cluster` is created from EtcdSnapshot `snapshot`, seen to hold it (its
 * finalizer on it) while checking, and deleted; waits until it is gone and the hold is off, and
 * returns the EtcdSnapshot then. The quota goes after, whatever happened.
 */
export async function abandonRestore(
  kube: ReturnType<typeof clientsOf>,
  ns: string,
  o: { readonly snapshot: string; readonly cluster: string; readonly timeoutMs: number },
): Promise<EtcdSnapshot> {
  const quota = { name: 'no-new-pods', namespace: ns };
  await kube.core.createNamespacedResourceQuota({
    namespace: ns,
    body: { metadata: quota, spec: { hard: { pods: '0' } } },
  });
  try {
    // Counted by the quota controller before the cluster is made, so its Job's Pod is refused.
    await until('the quota counted', async () =>
      (await kube.core.readNamespacedResourceQuota(quota)).status?.hard?.pods ? true : undefined,
    );
    const restore = new ClusterUnderTest(kube, ns, o.cluster);
    await restore.create({ replicas: 3, bootstrap: { restore: { snapshotName: o.snapshot } } });
    const hold = holdFinalizer(o.cluster);
    const read = () => readSnapshot(kube, ns, o.snapshot);
    await until(
      'the hold on',
      async () => ((await read()).metadata.finalizers?.includes(hold) ? true : undefined),
      o.timeoutMs,
    );
    // Mid-restore, and stays there: its check Job has no Pod.
    await until(
      'the restore checking',
      async () => {
        const c = (await restore.get()).status?.conditions?.find((x) => x.type === 'Progressing');
        return c?.message.startsWith('checking the snapshot') ? true : undefined;
      },
      o.timeoutMs,
    );
    if (!(await read()).metadata.finalizers?.includes(hold))
      throw new Error(`EtcdCluster ${o.cluster} let go of its hold before it was deleted`);
    await restore.delete();
    await untilGone(`EtcdCluster ${o.cluster}`, () => restore.get());
    return await until(
      `the hold of ${o.cluster} let go`,
      async () => {
        const s = await read();
        return s.metadata.finalizers?.includes(hold) ? undefined : s;
      },
      o.timeoutMs,
    );
  } finally {
    await kube.core.deleteNamespacedResourceQuota(quota);
  }
}
