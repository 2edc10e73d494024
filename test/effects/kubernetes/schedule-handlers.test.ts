import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot, EtcdSnapshotSchedule } from '../../../api/v1alpha1/index.ts';
import type { KubeContext } from '../../../effects/kubernetes/context.ts';
import { createScheduledSnapshot, deleteEtcdSnapshot } from '../../../effects/kubernetes/schedule-handlers.ts';
import type { EffectError } from '../../../effects/types.ts';

/** The custom objects API over a map, answering 404 and 409 as the API server does. Fake: no API server runs in unit tests. */
function fakeCustom(objects: Map<string, { metadata: Record<string, unknown> }>) {
  let uids = 0;
  const key = (r: { plural: string; name: string }) => `${r.plural}/${r.name}`;
  const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });
  return {
    getNamespacedCustomObject: (r: { plural: string; name: string }) => {
      const o = objects.get(key(r));
      return o ? Promise.resolve(structuredClone(o)) : Promise.reject(status(404));
    },
    createNamespacedCustomObject: (r: { plural: string; name: string; body: { metadata: object } }) => {
      if (objects.has(key(r))) return Promise.reject(status(409));
      const made = { ...r.body, metadata: { ...r.body.metadata, uid: `snap-${++uids}` } };
      objects.set(key(r), made);
      return Promise.resolve(structuredClone(made));
    },
    deleteNamespacedCustomObject: (r: { plural: string; name: string; body: { preconditions: { uid: string } } }) => {
      const o = objects.get(key(r));
      if (!o) return Promise.reject(status(404));
      if (o.metadata.uid !== r.body.preconditions.uid) return Promise.reject(status(409));
      // The snapshot's finalizer keeps it, being deleted, until its stored object is gone.
      o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
      return Promise.resolve({});
    },
  };
}

const schedule: EtcdSnapshotSchedule = {
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdSnapshotSchedule',
  metadata: { name: 'nightly', namespace: 'prod', uid: 'sched-1' },
  spec: {
    clusterRef: { name: 'demo' },
    schedule: '0 3 * * *',
    destination: { pvc: { claimName: 'backups', subPath: 'etcd' } },
    retention: { keepLast: 3 },
    suspend: false,
    concurrencyPolicy: 'Forbid',
    failedHistoryLimit: 1,
    deletionPolicy: 'Retain',
  },
};

function setup() {
  const objects = new Map<string, { metadata: Record<string, unknown> }>([
    ['etcdsnapshotschedules/nightly', schedule as never],
  ]);
  const ctx = {
    cluster: { namespace: 'prod', name: 'demo', uid: '' },
    signal: new AbortController().signal,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    kube: { custom: fakeCustom(objects) },
  } as unknown as KubeContext;
  return { objects, ctx };
}

const run = {
  schedule: 'nightly',
  scheduleUid: 'sched-1',
  name: 'nightly-29453940',
  scheduledAt: '2026-01-01T03:00:00.000Z',
};
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: EffectError) => `${e.code} retryable=${String(e.retryable)}`,
  );

describe('schedule handlers', () => {
  it("a run's EtcdSnapshot takes the schedule's cluster, destination and deletionPolicy, labelled as its own and owned by no one", async () => {
    const { objects, ctx } = setup();
    expect(await createScheduledSnapshot.recover(run, ctx)).toEqual({ done: false });
    expect(await createScheduledSnapshot.run(run, ctx)).toEqual({ uid: 'snap-1' });
    const made = objects.get('etcdsnapshots/nightly-29453940') as unknown as EtcdSnapshot;
    expect(made.spec).toEqual({
      clusterRef: { name: 'demo' },
      destination: { pvc: { claimName: 'backups', subPath: 'etcd' } },
      deletionPolicy: 'Retain',
      verify: false,
    });
    expect(made.metadata.labels).toMatchObject({
      'etcd-operator.dev/schedule': 'nightly',
      'etcd-operator.dev/schedule-uid': 'sched-1',
    });
    expect(made.metadata.annotations).toEqual({ 'etcd-operator.dev/scheduled-at': '2026-01-01T03:00:00.000Z' });
    // Deleting the schedule must not take the backups with it.
    expect(made.metadata.ownerReferences).toBeUndefined();
    // After a crash: recover finds it; a repeated run finds it too and makes no second one.
    expect(await createScheduledSnapshot.recover(run, ctx)).toEqual({ done: true, result: { uid: 'snap-1' } });
    expect(await createScheduledSnapshot.run(run, ctx)).toEqual({ uid: 'snap-1' });
    expect([...objects.keys()].filter((k) => k.startsWith('etcdsnapshots/'))).toHaveLength(1);
  });

  it('an Nth run of spec.verify.every asks its EtcdSnapshot to be verified', async () => {
    const { objects, ctx } = setup();
    await createScheduledSnapshot.run({ ...run, verify: true }, ctx);
    const made = objects.get('etcdsnapshots/nightly-29453940') as unknown as EtcdSnapshot;
    expect(made.spec.verify).toBe(true);
  });

  it('never adopts an EtcdSnapshot of that name it did not make, nor acts for a schedule created again', async () => {
    const { objects, ctx } = setup();
    objects.set('etcdsnapshots/nightly-29453940', { metadata: { name: 'nightly-29453940', uid: 'theirs' } });
    expect(await createScheduledSnapshot.recover(run, ctx)).toEqual({ done: false });
    expect(await code(createScheduledSnapshot.run(run, ctx))).toBe('ERR_CREATE_SNAPSHOT_FOREIGN retryable=false');
    expect(await code(createScheduledSnapshot.run({ ...run, scheduleUid: 'old-incarnation' }, ctx))).toBe(
      'ERR_SCHEDULE_GONE retryable=false',
    );
  });

  it('retention deletes only what this schedule made; gone or already going counts as done', async () => {
    const { objects, ctx } = setup();
    await createScheduledSnapshot.run(run, ctx);
    const target = { schedule: 'nightly', scheduleUid: 'sched-1', name: run.name, reason: 'keepLast' as const };
    expect(await deleteEtcdSnapshot.recover(target, ctx)).toEqual({ done: false });
    expect(await deleteEtcdSnapshot.run(target, ctx)).toEqual({});
    expect(objects.get(`etcdsnapshots/${run.name}`)?.metadata.deletionTimestamp).toBeDefined();
    expect(await deleteEtcdSnapshot.recover(target, ctx)).toEqual({ done: true, result: {} });
    expect(await deleteEtcdSnapshot.run(target, ctx)).toEqual({});
    expect(await deleteEtcdSnapshot.run({ ...target, name: 'never-was' }, ctx)).toEqual({});
    objects.set('etcdsnapshots/hand-made', { metadata: { name: 'hand-made', uid: 'u9' } });
    expect(await code(deleteEtcdSnapshot.run({ ...target, name: 'hand-made' }, ctx))).toBe(
      'ERR_DELETE_SNAPSHOT_FOREIGN retryable=false',
    );
    expect(objects.get('etcdsnapshots/hand-made')?.metadata.deletionTimestamp).toBeUndefined();
  });
});
