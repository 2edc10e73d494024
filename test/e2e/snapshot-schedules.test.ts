/**
 * EtcdSnapshotSchedules on the local cluster, as a user runs them: a one-member cluster, a
 * real S3-compatible server (s3-server.ts), and schedules firing every minute. After five
 * minutes a schedule with keepLast 3 holds exactly three good snapshots and the bucket exactly
 * their three objects; a schedule suspended after its first run makes no more; a cron
 * expression the CRD pattern lets through but cron refuses is reported in a condition. The
 * schedules run side by side, so the file takes about the five minutes the issue asks for.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdSnapshot, EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { BUCKET, listKeys, s3Destination, startS3 } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('schedules');
const { ns, kube } = env;
const RUN_FOR_MS = 5 * 60_000;
const snapshots = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot };
const schedules = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.schedule };

let s3: S3Client;
/** When the every-minute schedules were created. */
let started = 0;
/** The snapshots of `paused` when it was suspended. */
let pausedMade: (string | undefined)[] = [];

async function createSchedule(name: string, spec: object): Promise<void> {
  await kube.custom.createNamespacedCustomObject({
    ...schedules,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'EtcdSnapshotSchedule',
      metadata: { name },
      spec: { clusterRef: { name: 'demo' }, ...spec },
    },
  });
}

const getSchedule = async (name: string): Promise<EtcdSnapshotSchedule> =>
  (await kube.custom.getNamespacedCustomObject({ ...schedules, name })) as EtcdSnapshotSchedule;

/** The EtcdSnapshots a schedule made, by its label. */
async function snapshotsOf(schedule: string): Promise<EtcdSnapshot[]> {
  const list = (await kube.custom.listNamespacedCustomObject({
    ...snapshots,
    labelSelector: `etcd-operator.dev/schedule=${schedule}`,
  })) as { items: EtcdSnapshot[] };
  return list.items;
}

const condition = (s: EtcdSnapshotSchedule, type: string) => s.status?.conditions?.find((c) => c.type === type);

describe.skipIf(!hasNode)('snapshot schedules: EtcdSnapshotSchedule to S3 on the local cluster', () => {
  env.hooks();
  beforeAll(async () => {
    const demo = new ClusterUnderTest(kube, ns, 'demo');
    const [server] = await Promise.all([startS3(kube, ns), demo.create({ replicas: 1 })]);
    s3 = server.client;
    await demo.settled(1);
    started = Date.now();
    await createSchedule('every-minute', {
      schedule: '* * * * *',
      destination: s3Destination(ns, 'kept/'),
      retention: { keepLast: 3 },
    });
    await createSchedule('paused', {
      schedule: '* * * * *',
      destination: s3Destination(ns, 'paused/'),
      retention: { keepLast: 3 },
    });
  });
  afterAll(() => {
    s3?.destroy();
  });

  it('a cron expression the pattern lets through but cron refuses is reported, and nothing runs', async () => {
    await createSchedule('hour-25', {
      schedule: '0 25 * * *',
      destination: s3Destination(ns),
      retention: { keepLast: 3 },
    });
    const s = await until('the invalid schedule reported', async () => {
      const got = await getSchedule('hour-25');
      return condition(got, 'BackupHealthy')?.reason === 'InvalidSpec' ? got : undefined;
    });
    expect(condition(s, 'BackupHealthy')).toMatchObject({
      status: 'False',
      message: expect.stringContaining('schedule "0 25 * * *": hour "25" is out of range 0-23') as string,
    });
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(s.status?.nextScheduleTime).toBeUndefined();
    expect(await snapshotsOf('hour-25')).toEqual([]);
  });

  it('suspend stops new runs: suspended after its first snapshot, a schedule makes no more', async () => {
    await until('the first snapshot of paused', async () =>
      (await snapshotsOf('paused')).length > 0 ? true : undefined,
    );
    await kube.custom.patchNamespacedCustomObject(
      { ...schedules, name: 'paused', body: { spec: { suspend: true } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const suspended = await until('paused reports Suspended', async () => {
      const got = await getSchedule('paused');
      return condition(got, 'Progressing')?.reason === 'Suspended' ? got : undefined;
    });
    expect(suspended.status?.nextScheduleTime).toBeUndefined();
    const made = (await snapshotsOf('paused')).map((s) => s.metadata.name).sort();
    // Checked again once the keepLast schedule below has run for five minutes: nothing new.
    pausedMade = made;
  });

  it(
    '* * * * * with keepLast 3 for five minutes: exactly three good snapshots, and exactly their three objects in the bucket',
    { timeout: RUN_FOR_MS + 240_000 },
    async () => {
      await new Promise((r) => setTimeout(r, Math.max(0, started + RUN_FOR_MS - Date.now())));
      // Between two fire times: the last run done, and retention caught up with it.
      const kept = await until(
        'three Succeeded snapshots and nothing else',
        async () => {
          const all = await snapshotsOf('every-minute');
          const settled = all.length === 3 && all.every((s) => s.status?.phase === 'Succeeded');
          return settled ? all : undefined;
        },
        120_000,
      );
      const locations = kept.map((s) => s.status?.location).sort();
      const keys = await until(
        'the bucket down to three objects',
        async () => {
          const listed = await listKeys(s3, `kept/${ns}/demo/`);
          return listed.length === 3 ? listed : undefined;
        },
        120_000,
      );
      expect(keys.map((k) => `s3://${BUCKET}/${k}`).sort()).toEqual(locations);

      const s = await getSchedule('every-minute');
      expect(condition(s, 'BackupHealthy')).toMatchObject({ status: 'True', reason: 'SnapshotSucceeded' });
      const age = Date.now() - Date.parse(s.status?.lastSuccessfulTime ?? '');
      expect(age).toBeLessThan(2 * 60_000);
      expect(s.status?.missedRuns).toBe(0);
      expect(kept.map((k) => k.metadata.name)).toContain(s.status?.lastSnapshot);

      // The schedule suspended in the test above made none since.
      const paused = (await snapshotsOf('paused')).map((p) => p.metadata.name).sort();
      expect(paused).toEqual(pausedMade);
    },
  );
});
