import { describe, expect, it } from 'vitest';
import { askPatch, defragLook, EVERY_MINUTE, restorePatch } from '../../plugin/defrag.ts';
import { restoredCluster, restoreLook } from '../../plugin/restore.ts';
import { chooseDestination, failureOf, snapshotLook, snapshotName } from '../../plugin/snapshot.ts';
import { cluster, schedules, snapshots } from './fixtures.ts';

const good = snapshots[1]!;
const bad = snapshots[2]!;

describe('kubectl etcd snapshot: where it goes and how it is read', () => {
  it('the command line first, then --like, then the one schedule of the cluster, then spec.upgrade.snapshot', () => {
    const pvc = { pvc: { claimName: 'mine' } };
    expect(chooseDestination({ name: 'demo', destination: pvc }, cluster, schedules, undefined).from).toBe(
      'the command line',
    );
    expect(chooseDestination({ name: 'demo', destination: undefined }, cluster, schedules, good)).toEqual({
      destination: good.spec.destination,
      from: 'EtcdSnapshot demo-new',
    });
    expect(chooseDestination({ name: 'demo', destination: undefined }, cluster, schedules, undefined).from).toBe(
      'EtcdSnapshotSchedule nightly',
    );
    const upgrading = { ...cluster, spec: { ...cluster.spec, upgrade: { snapshot: { destination: pvc } } } };
    expect(chooseDestination({ name: 'demo', destination: undefined }, upgrading, [], undefined)).toEqual({
      destination: pvc,
      from: 'spec.upgrade.snapshot',
    });
  });

  it('with nowhere to go, says which flags give one', () => {
    expect(() => chooseDestination({ name: 'demo', destination: undefined }, cluster, [], undefined)).toThrow(
      /demo has no EtcdSnapshotSchedule or spec.upgrade.snapshot to take it from: give --pvc CLAIM\[\/DIR\], or --s3 s3:\/\/BUCKET\/PREFIX --s3-credentials SECRET/,
    );
    const two = [schedules[0]!, { ...schedules[0]!, metadata: { name: 'hourly' } }];
    expect(() => chooseDestination({ name: 'demo', destination: undefined }, cluster, two, undefined)).toThrow(
      /demo has 2 EtcdSnapshotSchedules \(nightly, hourly\): pick one's with --like SNAPSHOT/,
    );
  });

  it('names the snapshot after the cluster and the time, short enough for the API', () => {
    expect(snapshotName('demo', new Date('2026-11-27T10:05:09Z'))).toBe('demo-20261127-100509');
    expect(snapshotName('x'.repeat(60), new Date('2026-11-27T10:05:09Z')).length).toBeLessThanOrEqual(54);
  });

  it('progress is the phase, the member and the Progressing message; a verdict ends the wait with the reason', () => {
    const running = {
      ...good,
      status: {
        phase: 'Running' as const,
        member: 'demo-1',
        conditions: [
          {
            type: 'Progressing',
            status: 'True' as const,
            reason: 'Running',
            message: 'Job demo-new-snapshot streams the snapshot',
            lastTransitionTime: '',
          },
        ],
      },
    };
    expect(snapshotLook(running)).toEqual({
      progress: 'Running from demo-1: Job demo-new-snapshot streams the snapshot',
    });
    expect(snapshotLook({ ...good, status: undefined })).toEqual({
      progress: 'Pending: waiting for the operator to take it',
    });
    expect(snapshotLook(good)).toEqual({ done: good });
    expect(failureOf(bad)).toBe('the bucket backups does not exist');
  });
});

describe('kubectl etcd restore: a new EtcdCluster from a snapshot', () => {
  it('copies the old cluster spec and starts from the snapshot', () => {
    const { cluster: c, notes } = restoredCluster(good, 'demo2', cluster);
    expect(c).toEqual({
      apiVersion: 'etcd-operator.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'demo2', namespace: 'prod' },
      spec: { ...cluster.spec, bootstrap: { restore: { snapshotName: 'demo-new' } } },
    });
    expect(notes).toEqual([]);
  });

  it('leaves TLS out, saying why, and takes --replicas and --version', () => {
    const tls = {
      ...cluster,
      spec: { ...cluster.spec, tls: { client: { secretRef: { name: 's' } } }, auth: { enabled: true } },
    };
    const { cluster: c, notes } = restoredCluster(good, 'demo2', tls, { replicas: 1, version: '3.6.15' });
    expect(c.spec).not.toHaveProperty('tls');
    expect(c.spec).not.toHaveProperty('auth');
    expect(c.spec).toMatchObject({ replicas: 1, version: '3.6.15' });
    expect(notes[0]).toMatch(/spec.tls of demo is left out: its certificates name demo's members, not demo2's/);
  });

  it('without the old cluster, the snapshot version and 1Gi, said; a snapshot not Succeeded is refused', () => {
    const { cluster: c, notes } = restoredCluster(good, 'demo2', undefined);
    expect(c.spec).toMatchObject({ replicas: 3, version: '3.6.16', storage: { size: '1Gi' } });
    expect(notes[0]).toMatch(/no EtcdCluster demo to copy/);
    expect(() => restoredCluster(bad, 'demo2', cluster)).toThrow(/EtcdSnapshot demo-bad is Failed, not Succeeded/);
  });

  it('waits for Available, showing the step', () => {
    expect(restoreLook({ ...cluster, status: {} })).toEqual({ progress: 'Pending: waiting for the operator' });
    expect(restoreLook(cluster)).toEqual({ done: cluster });
  });
});

describe('kubectl etcd defrag: asked through spec.maintenance.defrag.schedule, put back after', () => {
  it('asks for a run every minute and puts back what was there', () => {
    expect(askPatch()).toEqual({ spec: { maintenance: { defrag: { schedule: EVERY_MINUTE } } } });
    expect(restorePatch(cluster)).toEqual({ spec: { maintenance: null } });
    const threshold = {
      ...cluster,
      spec: { ...cluster.spec, maintenance: { defrag: { threshold: { fragmentedPercent: 50 } } } },
    };
    expect(restorePatch(threshold)).toEqual({ spec: { maintenance: { defrag: { schedule: null } } } });
    const nightly = { ...cluster, spec: { ...cluster.spec, maintenance: { defrag: { schedule: '0 3 * * *' } } } };
    expect(restorePatch(nightly)).toEqual({ spec: { maintenance: { defrag: { schedule: '0 3 * * *' } } } });
    const empty = { ...cluster, spec: { ...cluster.spec, maintenance: {} } };
    expect(restorePatch(empty)).toEqual({ spec: { maintenance: { defrag: null } } });
  });

  const withConditions = (...c: [string, 'True' | 'False', string, string][]) => ({
    ...cluster,
    status: {
      conditions: c.map(([type, status, reason, message]) => ({
        type,
        status,
        reason,
        message,
        lastTransitionTime: '',
      })),
    },
  });

  it('waits for the run, shows it, and ends on a new Defragmented word', () => {
    const waiting = withConditions(['Progressing', 'False', 'Steady', '3 voters, all healthy']);
    const asked = defragLook(waiting, undefined);
    expect(asked).toMatchObject({ running: false });
    expect('progress' in asked && asked.progress).toMatch(/next minute/);
    const running = withConditions(['Progressing', 'True', 'Defragmenting', 'defragmenting demo-1 (1 of 3)']);
    expect(defragLook(running, undefined)).toEqual({
      progress: 'Defragmenting: defragmenting demo-1 (1 of 3)',
      running: true,
    });
    const old = {
      type: 'Defragmented',
      status: 'True' as const,
      reason: 'Completed',
      message: 'freed 1 MiB ... at 09:00',
      lastTransitionTime: '',
    };
    const same = withConditions(
      ['Progressing', 'False', 'Steady', ''],
      ['Defragmented', 'True', 'Completed', old.message],
    );
    expect(defragLook(same, old)).toHaveProperty('progress');
    const done = withConditions(
      ['Progressing', 'False', 'Steady', ''],
      ['Defragmented', 'True', 'Completed', 'freed 3 MiB ... at 10:00'],
    );
    expect(defragLook(done, old)).toMatchObject({ done: { message: 'freed 3 MiB ... at 10:00' } });
  });
});
