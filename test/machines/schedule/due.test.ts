import { describe, expect, it } from 'vitest';
import { parseCron } from '../../../machines/schedule/cron.ts';
import { MISSED_COUNT_LIMIT, due, type DueInput } from '../../../machines/schedule/due.ts';

const utc = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** due() with hourly defaults, its times as ISO strings. */
function dueAt(
  o: Partial<Omit<DueInput, 'cron' | 'now' | 'creationTime'>> & { cron?: string; created?: string; now: string },
) {
  const d = due({
    cron: parseCron(o.cron ?? '0 * * * *'),
    timeZone: o.timeZone ?? 'UTC',
    lastScheduleTime: o.lastScheduleTime ?? null,
    creationTime: utc(o.created ?? '2024-05-01T09:30:00Z'),
    startingDeadlineSeconds: o.startingDeadlineSeconds ?? null,
    now: utc(o.now),
  });
  return { ...d, latest: iso(d.latest), run: iso(d.run), next: iso(d.next) };
}

describe('due', () => {
  it('nothing is due before the first fire time after creation', () => {
    expect(dueAt({ now: '2024-05-01T09:59:59.999Z' })).toEqual({
      latest: null,
      run: null,
      missed: 0,
      missedCapped: false,
      next: '2024-05-01T10:00:00.000Z',
    });
  });

  it('a fire time is due at that very instant, and the next one is the timer', () => {
    expect(dueAt({ now: '2024-05-01T10:00:00Z' })).toEqual({
      latest: '2024-05-01T10:00:00.000Z',
      run: '2024-05-01T10:00:00.000Z',
      missed: 0,
      missedCapped: false,
      next: '2024-05-01T11:00:00.000Z',
    });
  });

  it('a fire time at or before creation never runs', () => {
    const d = dueAt({ created: '2024-05-01T10:00:00Z', now: '2024-05-01T10:30:00Z' });
    expect([d.run, d.next]).toEqual([null, '2024-05-01T11:00:00.000Z']);
  });

  it('once run, the same fire time is not due again', () => {
    expect(dueAt({ lastScheduleTime: utc('2024-05-01T10:00:00Z'), now: '2024-05-01T10:00:05Z' })).toEqual({
      latest: null,
      run: null,
      missed: 0,
      missedCapped: false,
      next: '2024-05-01T11:00:00.000Z',
    });
  });

  it('after a gap, only the most recent missed fire time runs; the older ones are counted', () => {
    expect(dueAt({ lastScheduleTime: utc('2024-05-01T10:00:00Z'), now: '2024-05-01T14:20:00Z' })).toEqual({
      latest: '2024-05-01T14:00:00.000Z',
      run: '2024-05-01T14:00:00.000Z',
      missed: 3, // 11:00, 12:00, 13:00
      missedCapped: false,
      next: '2024-05-01T15:00:00.000Z',
    });
  });

  it('startingDeadlineSeconds: a run may start that late and no later', () => {
    const last = utc('2024-05-01T10:00:00Z');
    expect(dueAt({ lastScheduleTime: last, startingDeadlineSeconds: 300, now: '2024-05-01T11:05:00Z' }).run).toBe(
      '2024-05-01T11:00:00.000Z',
    );
    expect(dueAt({ lastScheduleTime: last, startingDeadlineSeconds: 300, now: '2024-05-01T11:05:00.001Z' })).toEqual({
      latest: '2024-05-01T11:00:00.000Z',
      run: null,
      missed: 1,
      missedCapped: false,
      next: '2024-05-01T12:00:00.000Z',
    });
  });

  it('startingDeadlineSeconds: the older misses are skipped and counted with the late one', () => {
    expect(
      dueAt({
        lastScheduleTime: utc('2024-05-01T10:00:00Z'),
        startingDeadlineSeconds: 60,
        now: '2024-05-01T13:30:00Z',
      }),
    ).toEqual({
      latest: '2024-05-01T13:00:00.000Z',
      run: null,
      missed: 3,
      missedCapped: false,
      next: '2024-05-01T14:00:00.000Z',
    });
  });

  it('startingDeadlineSeconds 0: only a look at the fire time itself runs it', () => {
    const last = utc('2024-05-01T10:00:00Z');
    expect(dueAt({ lastScheduleTime: last, startingDeadlineSeconds: 0, now: '2024-05-01T11:00:00Z' }).run).toBe(
      '2024-05-01T11:00:00.000Z',
    );
    expect(dueAt({ lastScheduleTime: last, startingDeadlineSeconds: 0, now: '2024-05-01T11:00:00.001Z' }).run).toBe(
      null,
    );
  });

  it('a long outage counts its misses up to the limit, quickly', () => {
    const started = performance.now();
    const d = dueAt({ cron: '* * * * *', lastScheduleTime: utc('2023-05-01T00:00:00Z'), now: '2024-05-01T10:00:30Z' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(d).toEqual({
      latest: '2024-05-01T10:00:00.000Z',
      run: '2024-05-01T10:00:00.000Z',
      missed: MISSED_COUNT_LIMIT,
      missedCapped: true,
      next: '2024-05-01T10:01:00.000Z',
    });
  });

  it('exactly the limit of misses is not capped', () => {
    const last = utc('2024-05-01T08:19:00Z'); // 08:20 ... 09:59 is 100 misses, 10:00 runs
    const d = dueAt({ cron: '* * * * *', lastScheduleTime: last, now: '2024-05-01T10:00:00Z' });
    expect([d.missed, d.missedCapped]).toEqual([100, false]);
  });

  it('a last schedule time ahead of now (a clock set back) is waited out, not run again', () => {
    expect(dueAt({ lastScheduleTime: utc('2024-05-01T12:00:00Z'), now: '2024-05-01T10:30:00Z' })).toEqual({
      latest: null,
      run: null,
      missed: 0,
      missedCapped: false,
      next: '2024-05-01T13:00:00.000Z',
    });
  });

  it('an expression that never fires is never due and sets no timer', () => {
    expect(dueAt({ cron: '0 0 30 2 *', now: '2024-05-01T10:00:00Z' })).toEqual({
      latest: null,
      run: null,
      missed: 0,
      missedCapped: false,
      next: null,
    });
  });

  it('in a time zone: 02:30 daily in Berlin skips the day the clocks spring forward', () => {
    const last = utc('2024-03-30T01:30:00Z'); // 02:30 CET on the 30th
    expect(
      dueAt({ cron: '30 2 * * *', timeZone: 'Europe/Berlin', lastScheduleTime: last, now: '2024-03-31T12:00:00Z' }),
    ).toEqual({ latest: null, run: null, missed: 0, missedCapped: false, next: '2024-04-01T00:30:00.000Z' });
  });

  it('in a time zone: 01:30 daily in New York runs once on the day the clocks fall back', () => {
    const first = utc('2024-11-03T05:30:00Z'); // 01:30 EDT
    expect(
      dueAt({ cron: '30 1 * * *', timeZone: 'America/New_York', lastScheduleTime: first, now: '2024-11-03T06:45:00Z' }),
    ).toEqual({ latest: null, run: null, missed: 0, missedCapped: false, next: '2024-11-04T06:30:00.000Z' });
  });
});
