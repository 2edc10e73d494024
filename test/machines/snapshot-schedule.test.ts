import { describe, expect, it } from 'vitest';
import { describeSchedule } from '../../machines/describe-snapshot-schedule.ts';
import type { OwnedSnapshot } from '../../machines/schedule/index.ts';
import { nextScheduleTime, scheduledSnapshotName } from '../../machines/snapshot-schedule-decide.ts';
import { snapshotScheduleMachine } from '../../machines/snapshot-schedule.ts';
import type { ScheduleEvent, ScheduleSpecObservation } from '../../machines/types.ts';
import { Driver, type Intent } from './harness.ts';

const schedule = { namespace: 'default', name: 'nightly', uid: 'sched-1', cluster: 'demo' };
const T = (iso: string): number => Date.parse(iso);
const created = T('2026-01-01T00:00:00Z');

const spec = (o: Partial<ScheduleSpecObservation> = {}): ScheduleSpecObservation => ({
  generation: 1,
  schedule: '0 3 * * *',
  timeZone: null,
  suspend: false,
  startingDeadlineSeconds: null,
  keepLast: 3,
  maxAge: null,
  failedHistoryLimit: 1,
  createdAt: created,
  ...o,
});
const updated = (at: number, o: Partial<ScheduleSpecObservation> = {}, deleting = false): ScheduleEvent => ({
  type: 'k8s.schedule.updated',
  at,
  spec: spec(o),
  deleting,
});
const listed = (at: number, snapshots: OwnedSnapshot[]): ScheduleEvent => ({
  type: 'k8s.snapshots.listed',
  at,
  snapshots,
});
const tick = (at: number): ScheduleEvent => ({ type: 'timer.tick', at });
const ok = (kind: string, at: number): ScheduleEvent =>
  ({ type: `effect.${kind}.succeeded`, at, result: {} }) as ScheduleEvent;
const failed = (kind: string, at: number, retryable = true): ScheduleEvent =>
  ({ type: `effect.${kind}.failed`, at, error: { code: 'ERR_X', message: 'no', retryable } }) as ScheduleEvent;

/** A snapshot of the schedule, in `phase`, made at `iso` (and finished a minute later). */
const snap = (iso: string, phase: OwnedSnapshot['phase'] = 'Succeeded'): OwnedSnapshot => ({
  name: scheduledSnapshotName('nightly', T(iso)),
  phase,
  createdAt: T(iso),
  completedAt: phase === 'Succeeded' || phase === 'Failed' ? T(iso) + 60_000 : null,
});
const create = (iso: string, verify = false): Intent => ({
  type: 'createScheduledSnapshot',
  params: {
    schedule: 'nightly',
    scheduleUid: 'sched-1',
    name: scheduledSnapshotName('nightly', T(iso)),
    scheduledAt: new Date(T(iso)).toISOString(),
    verify,
  },
});
const del = (name: string, reason: string): Intent => ({
  type: 'deleteEtcdSnapshot',
  params: { schedule: 'nightly', scheduleUid: 'sched-1', name, reason },
});

type Step = readonly [ScheduleEvent, string, Intent[]?];
function play(d: Driver<typeof snapshotScheduleMachine>, steps: readonly Step[]): void {
  for (const [event, state, intents] of steps) {
    const out = d.send(event);
    expect(out.state, `after ${event.type} at ${new Date(event.at).toISOString()}`).toBe(state);
    expect(out.intents, `intents after ${event.type}`).toEqual(intents ?? []);
  }
}

/** A schedule observed at `iso` with the snapshots given. */
function observed(
  iso = '2026-01-01T02:59:00Z',
  o: Partial<ScheduleSpecObservation> = {},
  snapshots: OwnedSnapshot[] = [],
): Driver<typeof snapshotScheduleMachine> {
  const d = new Driver(snapshotScheduleMachine, { schedule });
  expect(d.intents).toEqual([]);
  play(d, [
    [updated(T(iso), o), 'pending'],
    [listed(T(iso), snapshots), 'idle'],
  ]);
  return d;
}

describe('schedule machine', () => {
  it('at the fire time creates one EtcdSnapshot named after it, and never a second for the same fire time', () => {
    const d = observed();
    expect(nextScheduleTime(d.context)).toBe(T('2026-01-01T03:00:00Z'));
    expect(describeSchedule(d.state, d.context).message).toContain(
      'next snapshot of EtcdCluster demo at 2026-01-01T03:00:00.000Z',
    );
    play(d, [
      [tick(T('2026-01-01T02:59:59Z')), 'idle'],
      [tick(T('2026-01-01T03:00:01Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]],
      [ok('createScheduledSnapshot', T('2026-01-01T03:00:02Z')), 'idle'],
      [tick(T('2026-01-01T03:00:30Z')), 'idle'],
      [listed(T('2026-01-01T03:00:31Z'), [snap('2026-01-01T03:00:00Z', 'Running')]), 'idle'],
    ]);
    expect(d.context.lastScheduleTime).toBe(T('2026-01-01T03:00:00Z'));
    expect(d.context.lastSnapshot).toBe('nightly-29453940');
    expect(nextScheduleTime(d.context)).toBe(T('2026-01-02T03:00:00Z'));
  });

  it('a crash after asking resumes the same run: the journaled fire time and name, never a new one', () => {
    const d = observed('2026-01-01T02:59:20Z', { schedule: '* * * * *', createdAt: T('2026-01-01T02:59:10Z') });
    play(d, [[tick(T('2026-01-01T03:00:05Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]]]);
    d.restart();
    expect(d.context.run).toEqual({ name: 'nightly-29453940', scheduledAt: T('2026-01-01T03:00:00Z'), verify: false });
    // Back two minutes later: observations first, then the outcome recover found. The fire times in
    // between are not run on top of it; the run that was asked for is recorded.
    play(d, [
      [listed(T('2026-01-01T03:02:10Z'), [snap('2026-01-01T03:00:00Z', 'Running')]), 'creating.asking.running'],
      [ok('createScheduledSnapshot', T('2026-01-01T03:02:11Z')), 'busy'],
    ]);
    expect(d.context.lastScheduleTime).toBe(T('2026-01-01T03:00:00Z'));
  });

  it('a create that fails is retried with back-off under the same name, even once later fire times passed', () => {
    const d = observed('2026-01-01T02:59:20Z', { schedule: '* * * * *', createdAt: T('2026-01-01T02:59:10Z') });
    play(d, [
      [tick(T('2026-01-01T03:00:01Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]],
      [failed('createScheduledSnapshot', T('2026-01-01T03:00:02Z')), 'creating.asking.backingOff'],
      [tick(T('2026-01-01T03:02:00Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]],
      [
        ok('createScheduledSnapshot', T('2026-01-01T03:02:01Z')),
        'creating.asking.running',
        [create('2026-01-01T03:02:00Z')],
      ],
    ]);
    // The 03:01 fire time was passed over by the 03:02 one: counted as missed, not run late.
    expect(d.context.missedRuns).toBe(1);
  });

  it('Forbid: a run due while the previous snapshot runs waits for it, then starts', () => {
    const d = observed('2026-01-01T02:59:00Z', {}, [snap('2026-01-01T02:58:00Z', 'Running')]);
    play(d, [[tick(T('2026-01-01T03:00:01Z')), 'busy']]);
    expect(describeSchedule(d.state, d.context).message).toBe(
      `the run due at 2026-01-01T03:00:00.000Z waits for EtcdSnapshot ${snap('2026-01-01T02:58:00Z').name} to finish (concurrencyPolicy Forbid)`,
    );
    play(d, [
      [
        listed(T('2026-01-01T03:04:00Z'), [snap('2026-01-01T02:58:00Z')]),
        'creating.asking.running',
        [create('2026-01-01T03:00:00Z')],
      ],
    ]);
  });

  it('Forbid with a starting deadline: a run that waited past it is missed, counted, and the schedule goes on', () => {
    const d = observed('2026-01-01T02:59:00Z', { startingDeadlineSeconds: 60 }, [
      snap('2026-01-01T02:58:00Z', 'Running'),
    ]);
    play(d, [
      [tick(T('2026-01-01T03:00:01Z')), 'busy'],
      [tick(T('2026-01-01T03:01:30Z')), 'idle'],
    ]);
    expect(d.context.missedRuns).toBe(1);
    expect(d.context.lastScheduleTime).toBeNull();
    play(d, [[listed(T('2026-01-01T03:05:00Z'), [snap('2026-01-01T02:58:00Z')]), 'idle']]);
  });

  it('after an outage runs the latest fire time once and counts the ones it passed over', () => {
    const d = observed('2026-01-01T02:59:00Z');
    play(d, [
      [tick(T('2026-01-01T03:00:01Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]],
      [ok('createScheduledSnapshot', T('2026-01-01T03:00:02Z')), 'idle'],
      [tick(T('2026-01-04T07:00:00Z')), 'creating.asking.running', [create('2026-01-04T03:00:00Z')]],
    ]);
    expect(d.context.missedRuns).toBe(2);
  });

  it('suspended: nothing is created or deleted; resumed, the latest fire time runs', () => {
    const d = new Driver(snapshotScheduleMachine, { schedule });
    const two = [snap('2025-12-30T03:00:00Z'), snap('2025-12-31T03:00:00Z')];
    play(d, [
      [updated(T('2026-01-01T02:59:00Z'), { suspend: true, keepLast: 1 }), 'pending'],
      [listed(T('2026-01-01T02:59:00Z'), two), 'suspended'],
    ]);
    expect(nextScheduleTime(d.context)).toBeNull();
    play(d, [
      [tick(T('2026-01-01T03:00:01Z')), 'suspended'],
      [tick(T('2026-01-02T03:00:01Z')), 'suspended'],
      [
        updated(T('2026-01-02T04:00:00Z'), { suspend: false, keepLast: 1, generation: 2 }),
        'creating.asking.running',
        [create('2026-01-02T03:00:00Z')],
      ],
    ]);
    expect(d.context.missedRuns).toBe(1);
  });

  it('an expression the pattern lets through but cron refuses rests in invalid with the reason, until the spec is fixed', () => {
    const d = new Driver(snapshotScheduleMachine, { schedule });
    play(d, [
      [updated(T('2026-01-01T02:59:00Z'), { schedule: '0 25 * * *' }), 'pending'],
      [listed(T('2026-01-01T02:59:00Z'), []), 'invalid'],
      [tick(T('2026-01-01T03:00:00Z')), 'invalid'],
    ]);
    expect(d.snapshot.hasTag('warning')).toBe(true);
    expect(describeSchedule(d.state, d.context)).toEqual({
      step: 'InvalidSpec',
      message: 'schedule "0 25 * * *": hour "25" is out of range 0-23; nothing runs until it is fixed',
    });
    play(d, [[updated(T('2026-01-01T03:01:00Z'), { schedule: '0 4 * * *', generation: 2 }), 'idle']]);
    play(d, [[updated(T('2026-01-01T03:02:00Z'), { timeZone: 'Mars/Olympus', generation: 3 }), 'invalid']]);
    expect(d.context.invalid).toContain('"Mars/Olympus" is not an IANA time zone name');
  });

  it('retention deletes what keepLast drops, one at a time, and never asks twice while the list lags', () => {
    const three = [snap('2025-12-29T03:00:00Z'), snap('2025-12-30T03:00:00Z'), snap('2025-12-31T03:00:00Z')];
    const d = new Driver(snapshotScheduleMachine, { schedule });
    play(d, [
      [updated(T('2026-01-01T02:00:00Z'), { keepLast: 2 }), 'pending'],
      [listed(T('2026-01-01T02:00:00Z'), three), 'pruning.asking.running', [del(three[0]!.name, 'keepLast')]],
      // Deleted, but the cache still lists it: not asked again.
      [ok('deleteEtcdSnapshot', T('2026-01-01T02:00:01Z')), 'idle'],
      [listed(T('2026-01-01T02:00:02Z'), three), 'idle'],
      [listed(T('2026-01-01T02:00:03Z'), three.slice(1)), 'idle'],
    ]);
    expect(d.context.deleted).toEqual([]);
  });

  it('failed snapshots are history: failedHistoryLimit keeps the newest, and they never count as backups', () => {
    const d = new Driver(snapshotScheduleMachine, { schedule });
    const old = snap('2025-12-30T03:00:00Z', 'Failed');
    play(d, [
      [updated(T('2026-01-01T02:00:00Z'), { keepLast: 1, failedHistoryLimit: 1 }), 'pending'],
      [
        listed(T('2026-01-01T02:00:00Z'), [snap('2025-12-29T03:00:00Z'), old, snap('2025-12-31T03:00:00Z', 'Failed')]),
        'pruning.asking.running',
        [del(old.name, 'failedHistoryLimit')],
      ],
    ]);
  });

  it('a delete that fails for good rests in failed, and is tried again at the next run', () => {
    const three = [snap('2025-12-30T03:00:00Z'), snap('2025-12-31T03:00:00Z')];
    const d = new Driver(snapshotScheduleMachine, { schedule });
    play(d, [
      [updated(T('2026-01-01T02:00:00Z'), { keepLast: 1 }), 'pending'],
      [listed(T('2026-01-01T02:00:00Z'), three), 'pruning.asking.running', [del(three[0]!.name, 'keepLast')]],
      [failed('deleteEtcdSnapshot', T('2026-01-01T02:00:01Z'), false), 'failed'],
      [tick(T('2026-01-01T02:30:00Z')), 'failed'],
    ]);
    expect(d.snapshot.hasTag('warning')).toBe(true);
    expect(describeSchedule(d.state, d.context).message).toContain(
      `deleting EtcdSnapshot ${three[0]!.name} failed: ERR_X: no`,
    );
    play(d, [
      [tick(T('2026-01-01T03:00:01Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]],
      [
        ok('createScheduledSnapshot', T('2026-01-01T03:00:02Z')),
        'pruning.asking.running',
        [del(three[0]!.name, 'keepLast')],
      ],
    ]);
  });

  it('a create that fails for good (a foreign EtcdSnapshot by that name) loses that run only', () => {
    const d = observed();
    play(d, [
      [tick(T('2026-01-01T03:00:01Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z')]],
      [failed('createScheduledSnapshot', T('2026-01-01T03:00:02Z'), false), 'failed'],
      [tick(T('2026-01-02T03:00:01Z')), 'creating.asking.running', [create('2026-01-02T03:00:00Z')]],
    ]);
  });

  it('being deleted, it makes no more snapshots and deletes none of those it made', () => {
    const d = observed('2026-01-01T02:59:00Z', { keepLast: 1 }, [snap('2025-12-30T03:00:00Z')]);
    play(d, [
      [updated(T('2026-01-01T02:59:30Z'), { keepLast: 1 }, true), 'ending'],
      [listed(T('2026-01-01T03:00:01Z'), [snap('2025-12-30T03:00:00Z'), snap('2025-12-31T03:00:00Z')]), 'ending'],
    ]);
    expect(nextScheduleTime(d.context)).toBeNull();
  });

  it('spec.verify.every 3: the first run and every third after it ask for a verified snapshot; a lost run is not counted', () => {
    const d = observed('2026-01-01T02:59:20Z', {
      schedule: '* * * * *',
      createdAt: T('2026-01-01T02:59:10Z'),
      verifyEvery: 3,
      keepLast: 10,
    });
    const minute = (m: number) => `2026-01-01T03:0${m}:00Z`;
    const at = (m: number, s: number) => T(`2026-01-01T03:0${m}:${String(s).padStart(2, '0')}Z`);
    const runs: boolean[] = [];
    for (let m = 0; m < 5; m++) {
      const out = d.send(tick(at(m, 5)));
      expect(out.intents).toHaveLength(1);
      runs.push((out.intents[0]!.params as { verify: boolean }).verify);
      expect(out.intents).toEqual([create(minute(m), runs[m])]);
      if (m === 1) {
        // Failed for good: that run is lost, and the next one takes its turn.
        play(d, [[failed('createScheduledSnapshot', at(m, 6), false), 'failed']]);
        continue;
      }
      d.send(ok('createScheduledSnapshot', at(m, 6)));
      d.send(listed(at(m, 7), [snap(minute(m), 'Succeeded')]));
    }
    expect(runs).toEqual([true, false, false, false, true]);
    expect(d.context.runsCreated).toBe(4);
  });

  it('without spec.verify no run asks for verification', () => {
    const d = observed();
    play(d, [[tick(T('2026-01-01T03:00:01Z')), 'creating.asking.running', [create('2026-01-01T03:00:00Z', false)]]]);
  });
});
