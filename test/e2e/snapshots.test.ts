/**
 * EtcdSnapshots on the local cluster, as a user takes them: a 3-member cluster with 10,000
 * keys, a snapshot to a real S3-compatible server (versitygw, run as a Pod behind a Service with
 * its keys in a Secret) and one to a PVC of the local storage provisioner. Each is checked as a
 * user would: the status says what was stored, the bytes there have that sha256, and etcd
 * restored from them has every key. Then what deleting an EtcdSnapshot does to what it stored,
 * and the snapshots the operator refuses to take.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { PatchStrategy, setHeaderOptions, type V1PersistentVolume } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { binary, run } from '../../localcluster/controlplane/tools.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { until, untilGone } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import {
  abandonRestore,
  BUCKET,
  createSnapshot as takeSnapshot,
  listKeys,
  s3Destination,
  snapshotFinished,
  snapshotVerified,
  startS3,
} from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('snapshots');
const { ns, kube } = env;
const KEYS = 10_000;
const api = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot };

let demo: ClusterUnderTest;
let s3: S3Client;
/** The revision after the last key was written. */
let written = 0;

/** An EtcdSnapshot of demo to `destination`. */
const createSnapshot = (name: string, destination: object, extra: object = {}): Promise<void> =>
  takeSnapshot(kube, ns, name, { cluster: 'demo', destination, extra });

const getSnapshot = async (name: string): Promise<EtcdSnapshot> =>
  (await kube.custom.getNamespacedCustomObject({ ...api, name })) as EtcdSnapshot;

/** Waits until the snapshot is Succeeded or Failed; returns it. */
const finished = (name: string): Promise<EtcdSnapshot> => snapshotFinished(kube, ns, name);

/** sha256 and size of a stream. */
async function digest(stream: NodeJS.ReadableStream): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** Restores a snapshot file with etcdutl into a new one-member etcd and reads every key back. */
async function restoredKeys(file: string): Promise<Map<string, string>> {
  const local = new LocalEtcd('restored', '3.6.16');
  try {
    const peer = await local.allocate('r0');
    await run(await binary('etcdutl', '3.6.16'), [
      ...['snapshot', 'restore', file, '--data-dir', path.join(local.dir, 'r0'), '--name', 'r0'],
      ...['--initial-cluster', `r0=${peer}`, '--initial-advertise-peer-urls', peer],
    ]);
    await local.start('r0', `r0=${peer}`, 'new');
    return new Map(Object.entries(await local.clients.member(local.ref, 'r0').getAll().prefix('key-').strings()));
  } finally {
    await local.stop();
  }
}

const expectEveryKey = (keys: Map<string, string>): void => {
  expect(keys.size).toBe(KEYS);
  for (const i of [0, 1, 4999, KEYS - 1]) expect(keys.get(`key-${i}`)).toBe(`value-${i}`);
  expect([...keys].every(([k, v]) => v === `value-${k.slice(4)}`)).toBe(true);
};

describe.skipIf(!hasNode)('snapshots: EtcdSnapshot to S3 and to a PVC on the local cluster', () => {
  // Registered before the fixture's hooks, so it runs after its teardown (afterAll hooks run as a
  // stack): a failed test may leave finalizers with no manager to release them.
  afterAll(async () => {
    const snapshots = (await kube.custom.listNamespacedCustomObject(api).catch(() => ({ items: [] }))) as {
      items: EtcdSnapshot[];
    };
    for (const s of snapshots.items)
      await kube.custom
        .patchNamespacedCustomObject(
          { ...api, name: s.metadata.name ?? '', body: { metadata: { finalizers: null } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .catch(() => undefined);
  });
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    const [server] = await Promise.all([startS3(kube, ns), demo.create({ replicas: 3 })]);
    s3 = server.client;
    await demo.settled(3);
    const etcd = await demo.client();
    try {
      for (let i = 0; i < KEYS; i += 500) {
        const puts = Array.from({ length: Math.min(500, KEYS - i) }, (_, j) =>
          etcd
            .put(`key-${i + j}`)
            .value(`value-${i + j}`)
            .exec(),
        );
        for (const r of await Promise.all(puts)) written = Math.max(written, Number(r.header.revision));
      }
    } finally {
      etcd.close();
    }
  });
  afterAll(() => {
    s3?.destroy();
  });

  it('to S3: stored, read back, and restorable with every key; taken from a follower', async () => {
    await createSnapshot('to-s3', s3Destination(ns));
    const s = await finished('to-s3');
    expect(
      s.status?.conditions?.find((c) => c.type === 'Complete'),
      JSON.stringify(s.status),
    ).toMatchObject({
      status: 'True',
    });
    const uid = (s.metadata.uid ?? '').slice(0, 8);
    const key = `etcd/${ns}/demo/to-s3-${uid}.db`;
    expect(s.status).toMatchObject({ phase: 'Succeeded', location: `s3://${BUCKET}/${key}`, etcdVersion: '3.6.16' });
    expect(s.status?.revision).toBeGreaterThanOrEqual(written);
    // A follower, so the leader keeps serving writes undisturbed.
    const etcd = await demo.client();
    const leader = await etcd.maintenance.status().then((r) => r.leader);
    const { members } = await etcd.cluster.memberList({});
    etcd.close();
    const from = members.find((m) => m.name === s.status?.member);
    expect(from, `member ${s.status?.member}`).toBeDefined();
    expect(from?.ID).not.toBe(leader);

    const file = path.join(env.dir, 'from-s3.db');
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    await pipeline(Body as NodeJS.ReadableStream, createWriteStream(file));
    expect(await digest(createReadStream(file))).toEqual({ sha256: s.status?.sha256, size: s.status?.size });
    expectEveryKey(await restoredKeys(file));
  });

  it('to a PVC: a whole file on the claim, restorable with every key', async () => {
    await kube.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'backups' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '256Mi' } } },
      },
    });
    await createSnapshot('to-pvc', { pvc: { claimName: 'backups', subPath: 'etcd/nightly' } });
    const s = await finished('to-pvc');
    const uid = (s.metadata.uid ?? '').slice(0, 8);
    const relative = `etcd/nightly/${ns}-demo-to-pvc-${uid}.db`;
    expect(s.status, JSON.stringify(s.status)).toMatchObject({
      phase: 'Succeeded',
      location: `pvc://backups/${relative}`,
    });
    const claim = await kube.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'backups' });
    const pv: V1PersistentVolume = await kube.core.readPersistentVolume({ name: claim.spec?.volumeName ?? '' });
    const file = path.join(pv.spec?.hostPath?.path ?? '', relative);
    expect(await digest(createReadStream(file))).toEqual({ sha256: s.status?.sha256, size: s.status?.size });
    expectEveryKey(await restoredKeys(file));
  });

  it('with spec.verify: a restore into a throwaway etcd proves the S3 snapshot, Verified True with what was checked', async () => {
    await createSnapshot('verified', s3Destination(ns), { verify: true });
    const started = Date.now();
    const s = await snapshotVerified(kube, ns, 'verified');
    const verified = s.status?.conditions?.find((c) => c.type === 'Verified');
    console.log(
      `verified ${s.status?.size} bytes in ${Date.now() - started} ms after it was stored: ${verified?.message}`,
    );
    expect(verified, JSON.stringify(s.status)).toMatchObject({ status: 'True', reason: 'Matched' });
    const { revision, hashKV, keys } = s.status ?? {};
    // Every key written, and no other: the snapshot was taken after the last write.
    expect(keys).toBe(KEYS);
    expect(verified?.message).toMatch(
      new RegExp(`^restored and checked: revision ${revision} \\(head \\d+\\), hashKV ${hashKV}, ${KEYS} keys$`),
    );
    expect(s.status?.phase).toBe('Succeeded');
    expect(s.status?.verifiedTime).toBeDefined();
    // The throwaway etcd went with its Job's Pod: no Pod of it still runs.
    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/job=verify' });
    expect(pods.items.filter((p) => p.status?.phase === 'Running').map((p) => p.metadata?.name)).toEqual([]);
    // Gone with what it stored: the bucket holds only what the next cases count.
    await kube.custom.deleteNamespacedCustomObject({ ...api, name: 'verified' });
    await untilGone('EtcdSnapshot verified', () => getSnapshot('verified'));
  });

  /** The keys of a running cluster, and the revision a new write gets there. */
  async function keysOf(cut: ClusterUnderTest): Promise<{ keys: Map<string, string>; revision: number }> {
    const etcd = await cut.client();
    try {
      const keys = new Map(Object.entries(await etcd.getAll().prefix('key-').strings()));
      const revision = Number((await etcd.put('after-restore').value('x').exec()).header.revision);
      return { keys, revision };
    } finally {
      etcd.close();
    }
  }

  it('restores a new 3-member cluster from the S3 snapshot by name: every key, revisions moved past the old ones', async () => {
    const restored = new ClusterUnderTest(kube, ns, 'from-s3');
    await restored.create({ replicas: 3, bootstrap: { restore: { snapshotName: 'to-s3' } } });
    await restored.settled(3);
    await restored.verify(3);
    const { keys, revision } = await keysOf(restored);
    expectEveryKey(keys);
    // Revisions bumped by 1,000,000,000 and marked compacted: a watcher of the old cluster resynchronises.
    expect(revision).toBeGreaterThan(1_000_000_000 + written);
    const seed = (await restored.members()).find((m) => m.spec.bootstrap);
    const uid = ((await getSnapshot('to-s3')).metadata.uid ?? '').slice(0, 8);
    expect(seed?.spec.restore).toMatchObject({ s3: { bucket: BUCKET, key: `etcd/${ns}/demo/to-s3-${uid}.db` } });
    await restored.delete();
  });

  it('restores from a file on a PVC given by its path', async () => {
    const snapshot = await getSnapshot('to-pvc');
    const filePath = (snapshot.status?.location ?? '').replace('pvc://backups/', '');
    const restored = new ClusterUnderTest(kube, ns, 'from-pvc');
    await restored.create({
      replicas: 1,
      bootstrap: { restore: { source: { pvc: { claimName: 'backups', path: filePath } } } },
    });
    await restored.settled(1);
    expectEveryKey((await keysOf(restored)).keys);
    await restored.delete();
  });

  it('a cluster deleted while it restores lets go of its EtcdSnapshot: the hold comes off, the snapshot stays Succeeded and says why', async () => {
    const released = await abandonRestore(kube, ns, { snapshot: 'to-pvc', cluster: 'abandoned', timeoutMs: 120_000 });
    expect(released.metadata.deletionTimestamp).toBeUndefined();
    expect(released.status?.phase).toBe('Succeeded');
    // The snapshot's own machine let go (the cluster went without doing it), and says so.
    const events = (await kube.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.involvedObject.kind === 'EtcdSnapshot' && e.involvedObject.name === 'to-pvc',
    );
    expect(events.find((e) => e.reason === 'ReleasingHold')?.message).toContain(
      'letting go of the hold of EtcdCluster abandoned (finalizer restoring.etcd-operator.dev/abandoned)',
    );
  });

  it('refuses a snapshot changed in the bucket before any member starts, with a condition saying why', async () => {
    const s = await getSnapshot('to-s3');
    const key = (s.status?.location ?? '').replace(`s3://${BUCKET}/`, '');
    const { Body } = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    const bytes = Buffer.from(await (Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: bytes }));
    const bad = new ClusterUnderTest(kube, ns, 'from-bad');
    await bad.create({ replicas: 3, bootstrap: { restore: { snapshotName: 'to-s3' } } });
    const degraded = await until('from-bad refused', async () => {
      const c = await bad.get();
      return c.status?.conditions?.find(
        (x) => x.type === 'Degraded' && x.status === 'True' && x.reason === 'StepFailed',
      );
    });
    expect(degraded.message).toContain(`the snapshot at s3://${BUCKET}/${key} failed its check`);
    // etcd's own hash at the end of the file catches it first; the SHA-256 stored with it would too.
    expect(degraded.message).toMatch(
      new RegExp(`does not match the sha256 etcd sent with it|not the ${s.status?.sha256} it was stored with`),
    );
    expect(await bad.members()).toEqual([]);
    await bad.delete();
  });

  it('deleting an EtcdSnapshot deletes what it stored, unless its deletionPolicy is Retain', async () => {
    const keys = () => listKeys(s3, `etcd/${ns}/demo/`);
    await createSnapshot('kept', s3Destination(ns), { deletionPolicy: 'Retain' });
    expect((await finished('kept')).status?.phase).toBe('Succeeded');
    const before = await keys();
    expect(before).toHaveLength(2);
    const kept = before.find((k) => k?.includes('/kept-'));
    for (const name of ['to-s3', 'kept']) await kube.custom.deleteNamespacedCustomObject({ ...api, name });
    await untilGone('EtcdSnapshot to-s3', () => getSnapshot('to-s3'));
    await untilGone('EtcdSnapshot kept', () => getSnapshot('kept'));
    expect(await keys()).toEqual([kept]);
  });

  it('refuses a snapshot of a cluster that does not exist, saying so', async () => {
    await kube.custom.createNamespacedCustomObject({
      ...api,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'EtcdSnapshot',
        metadata: { name: 'of-nothing' },
        spec: { clusterRef: { name: 'ghost' }, destination: s3Destination(ns) },
      },
    });
    const s = await finished('of-nothing');
    expect(s.status?.phase).toBe('Failed');
    expect(s.status?.conditions?.find((c) => c.type === 'Complete')?.message).toContain(
      'EtcdCluster ghost does not exist',
    );
    // Nothing was asked of S3: no Job ran for it.
    const jobs = await kube.batch.listNamespacedJob({
      namespace: ns,
      labelSelector: 'etcd-operator.dev/snapshot=of-nothing',
    });
    expect(jobs.items).toEqual([]);
  });

  it('deleting the namespace with its EtcdSnapshots finishes: what cannot be deleted is kept, not waited for', async () => {
    await createSnapshot('last', { pvc: { claimName: 'backups' } });
    expect((await finished('last')).status?.phase).toBe('Succeeded');
    const started = performance.now();
    await kube.core.deleteNamespace({ name: ns });
    await untilGone(`namespace ${ns}`, () => kube.core.readNamespace({ name: ns }));
    expect(performance.now() - started).toBeLessThan(60_000);
  });
});
