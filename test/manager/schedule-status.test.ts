import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot, EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';
import { snapshotScheduleMachine } from '../../machines/snapshot-schedule.ts';
import { ownedSnapshots, scheduledSnapshotsListed, scheduleObserved } from '../../manager/observe-schedule.ts';
import { scheduleStatus } from '../../manager/schedule-status.ts';
import { Driver } from '../machines/harness.ts';

const schedule = (o: Partial<EtcdSnapshotSchedule['spec']> = {}): EtcdSnapshotSchedule => ({
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdSnapshotSchedule',
  metadata: {
    name: 'nightly',
    namespace: 'prod',
    uid: 'sched-1',
    generation: 2,
    creationTimestamp: new Date('2026-01-01T00:00:00Z'),
  },
  spec: {
    clusterRef: { name: 'demo' },
    schedule: '0 3 * * *',
    destination: { pvc: { claimName: 'backups' } },
    retention: { keepLast: 3 },
    suspend: false,
    concurrencyPolicy: 'Forbid',
    failedHistoryLimit: 1,
    deletionPolicy: 'Delete',
    ...o,
  },
});

const snapshot = (
  name: string,
  phase: string | undefined,
  o: { uid?: string; completed?: string; deleting?: boolean } = {},
): EtcdSnapshot =>
  ({
    metadata: {
      name,
      namespace: 'prod',
      creationTimestamp: '2026-01-01T03:00:00Z',
      labels: { 'etcd-operator.dev/schedule': 'nightly', 'etcd-operator.dev/schedule-uid': o.uid ?? 'sched-1' },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T04:00:00Z' } : {}),
    },
    spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'backups' } } },
    ...(phase ? { status: { phase, ...(o.completed ? { completionTime: o.completed } : {}) } } : {}),
  }) as unknown as EtcdSnapshot;

/** The machine fed what the manager would observe, and the status it writes. */
function statusAt(at: string, object: EtcdSnapshotSchedule, snapshots: EtcdSnapshot[]) {
  const d = new Driver(snapshotScheduleMachine, {
    schedule: { namespace: 'prod', name: 'nightly', uid: 'sched-1', cluster: 'demo' },
  });
  d.send(scheduleObserved(object, Date.parse(at)));
  d.send(scheduledSnapshotsListed(object, snapshots, Date.parse(at)));
  return { d, status: scheduleStatus(undefined, { path: d.state, context: d.context, generation: 2 }, Date.parse(at)) };
}

describe('schedule observations and status', () => {
  it('a schedule owns only the snapshots labelled with its uid, and not those being deleted', () => {
    const owned = ownedSnapshots(schedule(), [
      snapshot('nightly-2', 'Succeeded', { completed: '2026-01-02T03:01:00Z' }),
      snapshot('nightly-1', undefined),
      snapshot('nightly-0', 'Succeeded', { deleting: true }),
      snapshot('nightly-old', 'Succeeded', { uid: 'a-deleted-schedule' }),
    ]);
    expect(owned).toEqual([
      { name: 'nightly-1', phase: 'Pending', createdAt: Date.parse('2026-01-01T03:00:00Z'), completedAt: null },
      {
        name: 'nightly-2',
        phase: 'Succeeded',
        createdAt: Date.parse('2026-01-01T03:00:00Z'),
        completedAt: Date.parse('2026-01-02T03:01:00Z'),
      },
    ]);
  });

  it('tells how old the newest good backup is, which snapshot runs now and when the next one starts', () => {
    const { status } = statusAt('2026-01-02T02:30:00Z', schedule(), [
      snapshot('nightly-a', 'Succeeded', { completed: '2026-01-01T03:01:00Z' }),
      snapshot('nightly-b', 'Running'),
    ]);
    expect(status).toMatchObject({
      observedGeneration: 2,
      lastSuccessfulTime: '2026-01-01T03:01:00.000Z',
      nextScheduleTime: '2026-01-02T03:00:00.000Z',
      active: 'nightly-b',
      missedRuns: 0,
    });
    expect(status.conditions?.find((c) => c.type === 'BackupHealthy')).toMatchObject({
      status: 'True',
      reason: 'SnapshotSucceeded',
      message: 'EtcdSnapshot nightly-a succeeded at 2026-01-01T03:01:00.000Z',
    });
  });

  it('the newest finished snapshot failing makes the backups unhealthy, however many older ones succeeded', () => {
    const { status } = statusAt('2026-01-03T02:00:00Z', schedule(), [
      snapshot('nightly-a', 'Succeeded', { completed: '2026-01-01T03:01:00Z' }),
      {
        ...snapshot('nightly-b', 'Failed'),
        metadata: { ...snapshot('nightly-b', 'Failed').metadata, creationTimestamp: new Date('2026-01-02T03:00:00Z') },
      },
    ]);
    expect(status.conditions?.find((c) => c.type === 'BackupHealthy')).toMatchObject({
      status: 'False',
      reason: 'SnapshotFailed',
    });
    expect(status.lastSuccessfulTime).toBe('2026-01-01T03:01:00.000Z');
  });

  it('an invalid schedule says why in its conditions and has no next fire time', () => {
    const { status } = statusAt('2026-01-01T02:00:00Z', schedule({ schedule: '0 0 * * FRI-MON' }), []);
    expect(status.nextScheduleTime).toBeUndefined();
    for (const type of ['Progressing', 'BackupHealthy'])
      expect(status.conditions?.find((c) => c.type === type)).toMatchObject({
        status: 'False',
        reason: 'InvalidSpec',
        message: expect.stringContaining('day-of-week range "FRI-MON" runs backwards') as string,
      });
  });

  it('suspended: no next fire time, and Progressing is False with the reason', () => {
    const { status } = statusAt('2026-01-01T02:00:00Z', schedule({ suspend: true }), []);
    expect(status.nextScheduleTime).toBeUndefined();
    expect(status.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'Suspended',
    });
  });

  const checked = (name: string, completed: string, verified: 'True' | 'False', at: string): EtcdSnapshot => {
    const s = snapshot(name, 'Succeeded', { completed });
    const condition = { type: 'Verified', status: verified, reason: 'x', message: 'x', lastTransitionTime: at };
    return { ...s, status: { ...s.status, verifiedTime: at, conditions: [condition] } };
  };

  it('with spec.verify, BackupHealthy says when the last snapshot a restore proved was taken', () => {
    const { status } = statusAt('2026-01-03T02:00:00Z', schedule({ verify: { every: 2 } }), [
      checked('nightly-a', '2026-01-01T03:01:00Z', 'True', '2026-01-01T03:02:00Z'),
      snapshot('nightly-b', 'Succeeded', { completed: '2026-01-02T03:01:00Z' }),
    ]);
    expect(status.conditions?.find((c) => c.type === 'BackupHealthy')).toMatchObject({
      status: 'True',
      message:
        'EtcdSnapshot nightly-b succeeded at 2026-01-02T03:01:00.000Z; the last verified by a restore, EtcdSnapshot nightly-a, was taken at 2026-01-01T03:01:00.000Z',
    });
    expect(status.lastVerifiedTime).toBe('2026-01-01T03:01:00.000Z');
  });

  it('with spec.verify, the newest snapshot a restore checked not matching makes the backups unhealthy', () => {
    const { status } = statusAt('2026-01-03T02:00:00Z', schedule({ verify: { every: 1 } }), [
      checked('nightly-a', '2026-01-01T03:01:00Z', 'True', '2026-01-01T03:02:00Z'),
      checked('nightly-b', '2026-01-02T03:01:00Z', 'False', '2026-01-02T03:02:00Z'),
    ]);
    expect(status.conditions?.find((c) => c.type === 'BackupHealthy')).toMatchObject({
      status: 'False',
      reason: 'VerificationFailed',
      message: 'EtcdSnapshot nightly-b did not restore as recorded: see its Verified condition',
    });
    expect(status.lastVerifiedTime).toBe('2026-01-01T03:01:00.000Z');
  });
});
