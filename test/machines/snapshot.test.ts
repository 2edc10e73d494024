import { describe, expect, it } from 'vitest';
import { describeSnapshot } from '../../machines/describe-snapshot.ts';
import { snapshotMachine } from '../../machines/snapshot.ts';
import type { JobObservation, SnapshotEvent, SnapshotReport } from '../../machines/types.ts';
import { Driver, type Intent } from './harness.ts';

const snap = { namespace: 'default', name: 'nightly', uid: 's-1', cluster: 'demo' };
let clock = 1_000;
const at = (): number => (clock += 10);

const updated = (
  o: { deleting?: boolean; retain?: boolean; finalizer?: boolean; heldBy?: string[]; staleHolds?: string[] } = {},
): SnapshotEvent => ({
  type: 'k8s.snapshot.updated',
  at: at(),
  deleting: o.deleting ?? false,
  retain: o.retain ?? false,
  finalizer: o.finalizer ?? true,
  ...(o.heldBy ? { heldBy: o.heldBy } : {}),
  ...(o.staleHolds ? { staleHolds: o.staleHolds } : {}),
});
const cluster = (
  candidates: string[] | null,
  o: { exists?: boolean; deleting?: boolean; dormant?: boolean } = {},
): SnapshotEvent => ({
  type: 'k8s.cluster.observed',
  at: at(),
  cluster: { exists: o.exists ?? true, deleting: o.deleting ?? false, dormant: o.dormant ?? false, candidates },
});
const report: SnapshotReport = {
  location: 's3://backups/default/demo/nightly-s-1.db',
  size: 20480,
  sha256: 'a'.repeat(64),
  revision: 10_001,
  etcdVersion: '3.6.16',
};
const job = (
  o: Partial<JobObservation> | null,
  type: 'k8s.job.observed' | 'k8s.deleteJob.observed' = 'k8s.job.observed',
): SnapshotEvent => ({
  type,
  at: at(),
  job: o === null ? null : { uid: 'j1', active: true, succeeded: false, failed: null, deleting: false, ...o },
});
const deleteJob = (o: Partial<JobObservation> | null): SnapshotEvent => job(o, 'k8s.deleteJob.observed');
const ok = (kind: string, result?: Record<string, unknown>): SnapshotEvent =>
  ({ type: `effect.${kind}.succeeded`, at: at(), result }) as SnapshotEvent;
const failed = (kind: string, retryable = true): SnapshotEvent =>
  ({ type: `effect.${kind}.failed`, at: at(), error: { code: 'ERR_X', message: 'no', retryable } }) as SnapshotEvent;
const intent = (type: string, params: object = { snapshot: 'nightly' }): Intent => ({ type, params });

type Step = readonly [SnapshotEvent, string, Intent[]?];
function play(d: Driver<typeof snapshotMachine>, steps: readonly Step[]): void {
  for (const [event, state, intents] of steps) {
    const out = d.send(event);
    expect(out.state, `after ${event.type}`).toBe(state);
    if (intents) expect(out.intents, `intents after ${event.type}`).toEqual(intents);
  }
}

/** A new snapshot's machine, observed: its finalizer on, no Jobs yet, the cluster as given. */
function observed(candidates: string[] | null = ['demo-1', 'demo-0']): Driver<typeof snapshotMachine> {
  const d = new Driver(snapshotMachine, { snapshot: snap });
  play(d, [
    [updated(), 'pending'],
    [cluster(candidates), 'pending'],
    [job(null), 'pending'],
  ]);
  return d;
}

/** Drives a snapshot to Succeeded. */
function succeeded(): Driver<typeof snapshotMachine> {
  const d = observed();
  play(d, [
    [deleteJob(null), 'taking.creatingJob.running'],
    [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running'],
    [job({ succeeded: true, active: false, report }), 'succeeded'],
  ]);
  return d;
}

describe('snapshot machine', () => {
  it('puts its finalizer on before any Job, then takes the snapshot from a follower and records what was stored', () => {
    const d = new Driver(snapshotMachine, { snapshot: snap });
    play(d, [
      [updated({ finalizer: false }), 'pending'],
      [cluster(['demo-2', 'demo-0']), 'pending'],
      [job(null), 'pending'],
      [deleteJob(null), 'finalizing.running', [intent('addSnapshotFinalizer')]],
      [
        ok('addSnapshotFinalizer'),
        'taking.creatingJob.running',
        [intent('createSnapshotJob', { snapshot: 'nightly', member: 'demo-2' })],
      ],
      [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running', []],
      [job({ active: true }), 'taking.running', []],
      // The Job is done but its Pod's report has not been seen yet: nothing is recorded on faith.
      [job({ active: false, succeeded: true }), 'taking.running', []],
      [job({ active: false, succeeded: true, report }), 'succeeded', []],
    ]);
    expect(d.context.result).toEqual(report);
    expect(d.context.member).toBe('demo-2');
    expect(d.snapshot.hasTag('resting')).toBe(true);
    expect(describeSnapshot(d.state, d.context)).toMatchObject({ phase: 'Succeeded' });
    expect(describeSnapshot(d.state, d.context).message).toContain(report.sha256);
  });

  it.each([
    [[], { exists: true }, 'no healthy voting member with a leader (quorum lost?)'],
    [['demo-0'], { exists: false }, 'EtcdCluster demo does not exist'],
    [['demo-0'], { deleting: true }, 'EtcdCluster demo is being deleted'],
    [['demo-0'], { dormant: true }, 'EtcdCluster demo is scaled to zero'],
  ] as const)('refuses a cluster it cannot take a snapshot of: %j %j', (candidates, o, message) => {
    const d = new Driver(snapshotMachine, { snapshot: snap });
    play(d, [
      [updated(), 'pending'],
      [cluster([...candidates], o), 'pending'],
      [job(null), 'pending'],
      [deleteJob(null), 'failed', []],
    ]);
    const described = describeSnapshot(d.state, d.context);
    expect(described.phase).toBe('Failed');
    expect(described.message).toContain(message);
    // Failed is for good: the cluster coming back does not take the snapshot late.
    play(d, [[cluster(['demo-0']), 'failed', []]]);
  });

  it('waits for the first probe of its cluster after a manager restart, then goes on', () => {
    const d = observed(null);
    play(d, [
      [deleteJob(null), 'waiting', []],
      [
        cluster(['demo-0']),
        'taking.creatingJob.running',
        [intent('createSnapshotJob', { snapshot: 'nightly', member: 'demo-0' })],
      ],
    ]);
  });

  it('once its Job is asked for it follows the Job, whatever the cluster does meanwhile', () => {
    const d = observed();
    play(d, [
      [deleteJob(null), 'taking.creatingJob.running'],
      [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running'],
      [cluster([]), 'taking.running', []],
      [job({ active: false, failed: 'snapshot failed: context deadline exceeded' }), 'failed', []],
    ]);
    expect(describeSnapshot(d.state, d.context).message).toContain(
      'the snapshot Job failed: snapshot failed: context deadline exceeded',
    );
  });

  it('makes its Job again when someone deleted it, and retries a failed create with back-off', () => {
    const d = observed();
    play(d, [
      [deleteJob(null), 'taking.creatingJob.running'],
      [failed('createSnapshotJob'), 'taking.creatingJob.backingOff', []],
    ]);
    expect(d.context.retryAt).not.toBeNull();
    play(d, [
      [
        { type: 'timer.tick', at: (clock += 60_000) },
        'taking.creatingJob.running',
        [intent('createSnapshotJob', { snapshot: 'nightly', member: 'demo-1' })],
      ],
      [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running'],
      [job({ active: true }), 'taking.running'],
      [
        job(null),
        'taking.creatingJob.running',
        [intent('createSnapshotJob', { snapshot: 'nightly', member: 'demo-1' })],
      ],
    ]);
  });

  it('deleted with policy Delete: a Job deletes what was stored, then the finalizer goes', () => {
    const d = succeeded();
    play(d, [
      [updated({ deleting: true }), 'removing.deletingStored.creatingJob.running', [intent('createSnapshotDeleteJob')]],
      [ok('createSnapshotDeleteJob', { uid: 'd1' }), 'removing.deletingStored.running', []],
      [deleteJob({ active: true }), 'removing.deletingStored.running', []],
      [
        deleteJob({ active: false, succeeded: true }),
        'removing.releasing.running',
        [intent('releaseSnapshotFinalizer')],
      ],
      [ok('releaseSnapshotFinalizer'), 'removed', []],
    ]);
  });

  it('deleted while a cluster restores from it: what it stored is kept, said why, and deleted once the cluster lets go', () => {
    const d = succeeded();
    play(d, [[updated({ heldBy: ['demo'] }), 'succeeded', []]]);
    // Before anyone deletes it, describe says who holds it already.
    expect(describeSnapshot('succeeded', d.context).message).toMatch(
      /^stored and read back whole at .*; in use: EtcdCluster demo \(finalizer restoring\.etcd-operator\.dev\/demo\) restores from it, so a delete waits for it$/,
    );
    play(d, [
      [updated({ deleting: true, heldBy: ['demo'] }), 'removing.inUse', []],
      [deleteJob(null), 'removing.inUse', []],
    ]);
    expect(describeSnapshot('removing.inUse', d.context)).toEqual({
      phase: 'Deleting',
      step: 'InUse',
      message:
        'being deleted, and in use: EtcdCluster demo restores from it (finalizer restoring.etcd-operator.dev/demo); what it stored at s3://backups/default/demo/nightly-s-1.db is kept until the restore no longer needs it, then deleted with the EtcdSnapshot',
    });
    // A crash meanwhile resumes waiting: no Job is asked for while it is held.
    d.restart();
    play(d, [
      [updated({ deleting: true, heldBy: ['demo'] }), 'removing.inUse', []],
      [updated({ deleting: true }), 'removing.deletingStored.creatingJob.running', [intent('createSnapshotDeleteJob')]],
      [ok('createSnapshotDeleteJob', { uid: 'd1' }), 'removing.deletingStored.running', []],
      [
        deleteJob({ active: false, succeeded: true }),
        'removing.releasing.running',
        [intent('releaseSnapshotFinalizer')],
      ],
    ]);
  });

  it('deleted with the hold of a cluster gone or being deleted on it: lets that hold go, then deletes what it stored', () => {
    const d = succeeded();
    const hold = { snapshot: 'nightly', cluster: 'gone' };
    play(d, [
      [
        updated({ deleting: true, staleHolds: ['gone'] }),
        'removing.releasingHold.running',
        [intent('releaseSnapshotHold', hold)],
      ],
      [ok('releaseSnapshotHold'), 'removing.deletingStored.creatingJob.running', [intent('createSnapshotDeleteJob')]],
    ]);
  });

  it('at rest, the hold of a cluster deleted mid-restore is let go at once: the snapshot stays Succeeded, a crash meanwhile resumes the step', () => {
    const d = succeeded();
    const hold = { snapshot: 'nightly', cluster: 'gone' };
    play(d, [
      [updated({ heldBy: ['gone'] }), 'succeeded', []],
      [updated({ staleHolds: ['gone'] }), 'releasingHold.running', [intent('releaseSnapshotHold', hold)]],
    ]);
    expect(describeSnapshot('releasingHold.running', d.context)).toEqual({
      phase: 'Succeeded',
      step: 'ReleasingHold',
      message:
        'letting go of the hold of EtcdCluster gone (finalizer restoring.etcd-operator.dev/gone): that cluster is gone or being deleted, so it restores nothing from this snapshot any more',
    });
    // Resumed where it was: the intent in flight is the runner's to recover, not asked again.
    d.restart();
    play(d, [
      [updated({ staleHolds: ['gone'] }), 'releasingHold.running', []],
      [ok('releaseSnapshotHold'), 'succeeded', []],
      [updated(), 'succeeded', []],
    ]);
    expect(d.context.result).toEqual(report);
  });

  it('failed, the hold of a cluster gone is let go all the same, and it stays Failed', () => {
    const d = observed([]);
    play(d, [[deleteJob(null), 'failed']]);
    play(d, [
      [
        updated({ staleHolds: ['gone'] }),
        'releasingHold.running',
        [intent('releaseSnapshotHold', { snapshot: 'nightly', cluster: 'gone' })],
      ],
    ]);
    expect(describeSnapshot('releasingHold.running', d.context).phase).toBe('Failed');
    play(d, [[ok('releaseSnapshotHold'), 'failed', []]]);
  });

  it('deleted with policy Retain: the stored snapshot stays', () => {
    const d = succeeded();
    play(d, [
      [updated({ deleting: true, retain: true }), 'removing.releasing.running', [intent('releaseSnapshotFinalizer')]],
    ]);
  });

  it('deleted while its Job runs: the Job and its Pods go first, then what it may have stored', () => {
    const d = observed();
    play(d, [
      [deleteJob(null), 'taking.creatingJob.running'],
      [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running'],
      [job({ active: true }), 'taking.running'],
      [updated({ deleting: true }), 'removing.stoppingJob.running', [intent('deleteSnapshotJob')]],
      [ok('deleteSnapshotJob'), 'removing.awaitingJobGone', []],
      [job({ active: true, deleting: true }), 'removing.awaitingJobGone', []],
      [job(null), 'removing.deletingStored.creatingJob.running', [intent('createSnapshotDeleteJob')]],
    ]);
  });

  it('a delete Job that fails keeps the finalizer until the user deletes the Job or chooses Retain', () => {
    const d = succeeded();
    play(d, [
      [updated({ deleting: true }), 'removing.deletingStored.creatingJob.running'],
      [ok('createSnapshotDeleteJob', { uid: 'd1' }), 'removing.deletingStored.running'],
      [
        deleteJob({ active: false, failed: 'delete-snapshot failed: Access Denied' }),
        'removing.deletingStored.stuck',
        [],
      ],
    ]);
    expect(d.snapshot.hasTag('warning')).toBe(true);
    expect(describeSnapshot(d.state, d.context).message).toContain('Access Denied');
    play(d, [
      [deleteJob(null), 'removing.deletingStored.creatingJob.running', [intent('createSnapshotDeleteJob')]],
      [ok('createSnapshotDeleteJob', { uid: 'd2' }), 'removing.deletingStored.running'],
      [deleteJob({ active: false, failed: 'delete-snapshot failed: Access Denied' }), 'removing.deletingStored.stuck'],
      [updated({ deleting: true, retain: true }), 'removing.releasing.running', [intent('releaseSnapshotFinalizer')]],
    ]);
  });

  it('in a namespace being deleted no delete Job can run: the stored snapshot is kept and the finalizer goes', () => {
    const d = succeeded();
    play(d, [
      [updated({ deleting: true }), 'removing.deletingStored.creatingJob.running', [intent('createSnapshotDeleteJob')]],
      [
        {
          type: 'effect.createSnapshotDeleteJob.failed',
          at: at(),
          error: { code: 'ERR_NAMESPACE_TERMINATING', message: 'namespace default is being deleted', retryable: false },
        },
        'removing.releasing.running',
        [intent('releaseSnapshotFinalizer')],
      ],
    ]);
    expect(describeSnapshot(d.state, d.context).message).toContain(`the stored snapshot at ${report.location} is kept`);
    play(d, [[ok('releaseSnapshotFinalizer'), 'removed', []]]);
  });

  it('a snapshot deleted before its finalizer was on goes without any Job', () => {
    const d = new Driver(snapshotMachine, { snapshot: snap });
    play(d, [
      [updated({ deleting: true, finalizer: false }), 'pending'],
      [cluster(['demo-0']), 'pending'],
      [job(null), 'pending'],
      [deleteJob(null), 'removed', []],
    ]);
  });

  it('resumes from its journaled snapshot mid-step: a Job asked for before a crash is followed, not asked again', () => {
    const d = observed();
    play(d, [[deleteJob(null), 'taking.creatingJob.running']]);
    d.restart();
    expect(d.context.jobAsked).toBe(true);
    play(d, [
      [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running', []],
      [job({ succeeded: true, active: false, report }), 'succeeded', []],
    ]);
  });
});

const verifyJob = (o: Partial<JobObservation> | null): SnapshotEvent => ({
  type: 'k8s.verifyJob.observed',
  at: at(),
  job: o === null ? null : { uid: 'v1', active: true, succeeded: false, failed: null, deleting: false, ...o },
});
const verdict = { verified: true, checked: 'revision 10001 (head 10003), hashKV 42, 7 keys', differences: [] };

/** A snapshot with spec.verify, driven to stored: its verify Job is the next step. */
function storedToVerify(): Driver<typeof snapshotMachine> {
  const d = new Driver(snapshotMachine, { snapshot: snap });
  play(d, [
    [{ ...updated(), verify: true } as SnapshotEvent, 'pending'],
    [cluster(['demo-1']), 'pending'],
    [job(null), 'pending'],
    [deleteJob(null), 'taking.creatingJob.running'],
    [ok('createSnapshotJob', { uid: 'j1' }), 'taking.running'],
    [job({ succeeded: true, active: false, report }), 'verifying.creatingJob.running', [intent('createVerifyJob')]],
  ]);
  return d;
}

describe('snapshot machine: spec.verify', () => {
  it('once stored, a verify Job restores it; its verdict is recorded and the snapshot rests Succeeded', () => {
    const d = storedToVerify();
    expect(describeSnapshot(d.state, d.context)).toMatchObject({ phase: 'Succeeded', step: 'Verifying' });
    play(d, [
      [ok('createVerifyJob', { uid: 'v1' }), 'verifying.running', []],
      [verifyJob({ active: true }), 'verifying.running', []],
      // Done, but the Pod's verdict has not been seen yet: nothing recorded on faith.
      [verifyJob({ active: false, succeeded: true }), 'verifying.running', []],
      [verifyJob({ active: false, succeeded: true, verdict }), 'succeeded', []],
    ]);
    expect(d.context.verification).toEqual({ ...verdict, at: d.context.now });
    expect(d.context.result).toEqual(report);
    // Verified once: the Job going (garbage, or deleted) asks for nothing more.
    play(d, [[verifyJob(null), 'succeeded', []]]);
  });

  it('a restore that differs from the record is recorded as not verified, with what differed', () => {
    const d = storedToVerify();
    const differs = {
      verified: false,
      checked: 'revision 10001 (head 10001), hashKV 9, 6 keys',
      differences: ['6 keys at revision 10001, not the recorded 7'],
    };
    play(d, [
      [ok('createVerifyJob', { uid: 'v1' }), 'verifying.running'],
      [verifyJob({ active: false, succeeded: true, verdict: differs }), 'succeeded', []],
    ]);
    expect(d.context.verification).toMatchObject({
      verified: false,
      differences: ['6 keys at revision 10001, not the recorded 7'],
    });
  });

  it('a verify Job that fails (the stored file failed its sha256) is recorded as not checked, with its words', () => {
    const d = storedToVerify();
    const why = 'fetch: fetch-snapshot failed: s3://b/k has sha256 1f.., not the aa.. it was stored with';
    play(d, [
      [ok('createVerifyJob', { uid: 'v1' }), 'verifying.running'],
      [verifyJob({ active: false, failed: why }), 'succeeded', []],
    ]);
    expect(d.context.verification).toMatchObject({
      verified: false,
      checked: 'nothing',
      differences: [`the verify Job could not check it: ${why}`],
    });
    expect(d.context.failure).toBeNull();
  });

  it('a verify Job that cannot be made (nothing recorded) is recorded as not checked; one failing for a while is retried', () => {
    const d = storedToVerify();
    play(d, [
      [failed('createVerifyJob'), 'verifying.creatingJob.backingOff', []],
      [{ type: 'timer.tick', at: at() + 60_000 }, 'verifying.creatingJob.running', [intent('createVerifyJob')]],
      [failed('createVerifyJob', false), 'succeeded', []],
    ]);
    expect(d.context.verification).toMatchObject({
      verified: false,
      differences: ['the verify Job could not check it: ERR_X: no'],
    });
  });

  it('makes its verify Job again when someone deleted it before it finished', () => {
    const d = storedToVerify();
    play(d, [
      [ok('createVerifyJob', { uid: 'v1' }), 'verifying.running'],
      [verifyJob({ active: true }), 'verifying.running'],
      [verifyJob(null), 'verifying.creatingJob.running', [intent('createVerifyJob')]],
    ]);
  });

  it('resumes mid-step: a verify Job asked for before a crash is followed, not asked again', () => {
    const d = storedToVerify();
    d.restart();
    expect(d.context.verifyAsked).toBe(true);
    play(d, [
      [ok('createVerifyJob', { uid: 'v1' }), 'verifying.running', []],
      [verifyJob({ active: false, succeeded: true, verdict }), 'succeeded', []],
    ]);
  });

  it('deleted while verifying: removal goes on as for any snapshot (the verify Job goes with its owner)', () => {
    const d = storedToVerify();
    play(d, [
      [ok('createVerifyJob', { uid: 'v1' }), 'verifying.running'],
      [job({ succeeded: true, active: false, report, deleting: false }), 'verifying.running'],
      [
        { ...updated({ deleting: true }), verify: true } as SnapshotEvent,
        'removing.deletingStored.creatingJob.running',
        [intent('createSnapshotDeleteJob')],
      ],
    ]);
  });

  it('without spec.verify no verify Job is asked for, and a snapshot journaled before verify existed rests Succeeded', () => {
    const d = succeeded();
    expect(d.context.verification).toBeNull();
    play(d, [[verifyJob(null), 'succeeded', []]]);
  });
});
