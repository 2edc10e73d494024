import { describe, expect, it } from 'vitest';
import { parseCron, type Cron } from '../../../machines/schedule/cron.ts';
import { nextRun, prevRun } from '../../../machines/schedule/runs.ts';
import { TimeZoneError } from '../../../machines/schedule/zone.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;
const utc = (iso: string): number => Date.parse(iso);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The next `n` fire times after `from`, as ISO strings in UTC. */
function nextN(text: string, zone: string, from: string, n: number): (string | null)[] {
  const cron = parseCron(text);
  const out: (string | null)[] = [];
  let t: number | null = utc(from);
  for (let i = 0; i < n && t !== null; i++) out.push(iso((t = nextRun(cron, zone, t))));
  return out;
}

describe('nextRun: calendar', () => {
  it('is strictly after the given instant, to the millisecond', () => {
    const every = parseCron('* * * * *');
    expect(iso(nextRun(every, 'UTC', utc('2024-05-01T10:00:00.000Z')))).toBe('2024-05-01T10:01:00.000Z');
    expect(iso(nextRun(every, 'UTC', utc('2024-05-01T09:59:59.999Z')))).toBe('2024-05-01T10:00:00.000Z');
    expect(iso(nextRun(every, 'UTC', utc('2024-05-01T10:00:00.001Z')))).toBe('2024-05-01T10:01:00.000Z');
  });

  it('rolls over hours, days, months and years', () => {
    expect(nextN('59 23 31 12 *', 'UTC', '2024-06-01T00:00:00Z', 2)).toEqual([
      '2024-12-31T23:59:00.000Z',
      '2025-12-31T23:59:00.000Z',
    ]);
    expect(nextN('0 0 1 * *', 'UTC', '2024-12-15T00:00:00Z', 2)).toEqual([
      '2025-01-01T00:00:00.000Z',
      '2025-02-01T00:00:00.000Z',
    ]);
  });

  it('day 31 skips the months without one', () => {
    expect(nextN('0 0 31 * *', 'UTC', '2025-01-31T00:00:00Z', 4)).toEqual([
      '2025-03-31T00:00:00.000Z',
      '2025-05-31T00:00:00.000Z',
      '2025-07-31T00:00:00.000Z',
      '2025-08-31T00:00:00.000Z',
    ]);
  });

  it('day 30 skips February, also in a leap year', () => {
    expect(nextN('0 12 30 * *', 'UTC', '2024-01-30T12:00:00Z', 2)).toEqual([
      '2024-03-30T12:00:00.000Z',
      '2024-04-30T12:00:00.000Z',
    ]);
  });

  it('February 29 comes every four years, and eight across 2100', () => {
    expect(nextN('0 0 29 2 *', 'UTC', '2023-01-01T00:00:00Z', 3)).toEqual([
      '2024-02-29T00:00:00.000Z',
      '2028-02-29T00:00:00.000Z',
      '2032-02-29T00:00:00.000Z',
    ]);
    expect(nextN('0 0 29 2 *', 'UTC', '2096-03-01T00:00:00Z', 1)).toEqual(['2104-02-29T00:00:00.000Z']);
  });

  it('an expression that can never fire answers null, quickly', () => {
    for (const text of ['0 0 30 2 *', '0 0 31 4,6,9,11 *', '0 0 31 2 *']) {
      const started = performance.now();
      expect(nextRun(parseCron(text), 'Europe/Berlin', utc('2024-01-01T00:00:00Z'))).toBeNull();
      expect(prevRun(parseCron(text), 'Europe/Berlin', utc('2024-01-01T00:00:00Z'))).toBeNull();
      expect(performance.now() - started).toBeLessThan(500);
    }
  });

  it('steps and ranges', () => {
    expect(nextN('10-50/20 */12 * * *', 'UTC', '2024-05-01T00:30:00Z', 4)).toEqual([
      '2024-05-01T00:50:00.000Z',
      '2024-05-01T12:10:00.000Z',
      '2024-05-01T12:30:00.000Z',
      '2024-05-01T12:50:00.000Z',
    ]);
  });

  it('weekday names and 7 for Sunday (2024-05-04 is a Saturday)', () => {
    expect(nextN('0 9 * * SAT-7', 'UTC', '2024-05-01T00:00:00Z', 3)).toEqual([
      '2024-05-04T09:00:00.000Z',
      '2024-05-05T09:00:00.000Z',
      '2024-05-11T09:00:00.000Z',
    ]);
  });

  it('both day fields restricted: a day matches either (the 13th, or a Friday)', () => {
    // May 2024: Fridays are the 3rd, 10th, 17th; the 13th is a Monday.
    expect(nextN('0 0 13 * FRI', 'UTC', '2024-05-01T00:00:00Z', 4)).toEqual([
      '2024-05-03T00:00:00.000Z',
      '2024-05-10T00:00:00.000Z',
      '2024-05-13T00:00:00.000Z',
      '2024-05-17T00:00:00.000Z',
    ]);
  });

  it('one day field restricted: the other does not widen it', () => {
    expect(nextN('0 0 13 * *', 'UTC', '2024-05-01T00:00:00Z', 2)).toEqual([
      '2024-05-13T00:00:00.000Z',
      '2024-06-13T00:00:00.000Z',
    ]);
    expect(nextN('0 0 * * FRI', 'UTC', '2024-05-01T00:00:00Z', 2)).toEqual([
      '2024-05-03T00:00:00.000Z',
      '2024-05-10T00:00:00.000Z',
    ]);
  });

  it('a stepped day-of-month is restricted, so it ORs with the weekday (as in Kubernetes)', () => {
    // Days 1, 11, 21, 31 or a Monday (May 2024: Mondays 6, 13, 20, 27).
    expect(nextN('0 0 */10 * MON', 'UTC', '2024-05-01T00:00:00Z', 4)).toEqual([
      '2024-05-06T00:00:00.000Z',
      '2024-05-11T00:00:00.000Z',
      '2024-05-13T00:00:00.000Z',
      '2024-05-20T00:00:00.000Z',
    ]);
  });

  it('macros', () => {
    expect(nextN('@yearly', 'UTC', '2024-05-01T00:00:00Z', 1)).toEqual(['2025-01-01T00:00:00.000Z']);
    expect(nextN('@monthly', 'UTC', '2024-05-01T00:00:00Z', 1)).toEqual(['2024-06-01T00:00:00.000Z']);
    expect(nextN('@weekly', 'UTC', '2024-05-01T00:00:00Z', 1)).toEqual(['2024-05-05T00:00:00.000Z']);
    expect(nextN('@daily', 'UTC', '2024-05-01T00:00:00Z', 1)).toEqual(['2024-05-02T00:00:00.000Z']);
    expect(nextN('@hourly', 'UTC', '2024-05-01T00:00:00Z', 1)).toEqual(['2024-05-01T01:00:00.000Z']);
  });

  it('an unknown zone is a TimeZoneError', () => {
    expect(() => nextRun(parseCron('@daily'), 'Mars/Olympus', 0)).toThrow(TimeZoneError);
  });
});

describe('nextRun: time zones and daylight saving', () => {
  it('fires at the wall-clock time of the zone', () => {
    expect(nextN('0 9 * * *', 'Europe/Berlin', '2024-01-10T00:00:00Z', 1)).toEqual(['2024-01-10T08:00:00.000Z']);
    expect(nextN('0 9 * * *', 'Europe/Berlin', '2024-07-10T00:00:00Z', 1)).toEqual(['2024-07-10T07:00:00.000Z']);
    expect(nextN('0 9 * * *', 'Asia/Kathmandu', '2024-07-10T00:00:00Z', 1)).toEqual(['2024-07-10T03:15:00.000Z']);
    // The wall-clock date decides the weekday: Monday 00:30 in Tokyo is Sunday in UTC.
    expect(nextN('30 0 * * MON', 'Asia/Tokyo', '2024-05-01T00:00:00Z', 1)).toEqual(['2024-05-05T15:30:00.000Z']);
  });

  it('Berlin springs forward (2024-03-31, 02:00 -> 03:00): 02:30 does not exist and is skipped', () => {
    expect(nextN('30 2 * * *', 'Europe/Berlin', '2024-03-29T12:00:00Z', 3)).toEqual([
      '2024-03-30T01:30:00.000Z',
      '2024-04-01T00:30:00.000Z',
      '2024-04-02T00:30:00.000Z',
    ]);
    expect(nextN('0 * * * *', 'Europe/Berlin', '2024-03-30T23:30:00Z', 3)).toEqual([
      '2024-03-31T00:00:00.000Z', // 01:00 CET
      '2024-03-31T01:00:00.000Z', // 03:00 CEST, an hour later: 02:00 never happened
      '2024-03-31T02:00:00.000Z',
    ]);
  });

  it('Berlin falls back (2024-10-27, 03:00 -> 02:00): 02:30 happens twice and fires once', () => {
    expect(nextN('30 2 * * *', 'Europe/Berlin', '2024-10-26T12:00:00Z', 2)).toEqual([
      '2024-10-27T00:30:00.000Z', // 02:30 CEST, the first one
      '2024-10-28T01:30:00.000Z',
    ]);
    // From inside the repeated hour's second pass, the next run is after it.
    expect(nextN('*/15 * * * *', 'Europe/Berlin', '2024-10-27T01:20:00Z', 2)).toEqual([
      '2024-10-27T02:00:00.000Z', // 03:00 CET
      '2024-10-27T02:15:00.000Z',
    ]);
    expect(nextN('0 * * * *', 'Europe/Berlin', '2024-10-26T23:30:00Z', 3)).toEqual([
      '2024-10-27T00:00:00.000Z', // 02:00 CEST
      '2024-10-27T02:00:00.000Z', // 03:00 CET: 02:00 CET was a repeat
      '2024-10-27T03:00:00.000Z',
    ]);
  });

  it('New York springs forward (2024-03-10, 02:00 -> 03:00) and falls back (2024-11-03, 02:00 -> 01:00)', () => {
    expect(nextN('30 2 * * *', 'America/New_York', '2024-03-08T12:00:00Z', 2)).toEqual([
      '2024-03-09T07:30:00.000Z',
      '2024-03-11T06:30:00.000Z',
    ]);
    expect(nextN('30 1 * * *', 'America/New_York', '2024-11-02T12:00:00Z', 2)).toEqual([
      '2024-11-03T05:30:00.000Z', // 01:30 EDT
      '2024-11-04T06:30:00.000Z',
    ]);
    // Midnight is never touched by the change.
    expect(nextN('0 0 * * *', 'America/New_York', '2024-03-09T12:00:00Z', 2)).toEqual([
      '2024-03-10T05:00:00.000Z',
      '2024-03-11T04:00:00.000Z',
    ]);
  });

  it('Lord Howe moves its clocks by half an hour (2024-10-06, 02:00 -> 02:30)', () => {
    expect(nextN('15,45 2 * * *', 'Australia/Lord_Howe', '2024-10-05T12:00:00Z', 3)).toEqual([
      '2024-10-05T15:45:00.000Z', // 02:45 +11:00: 02:15 did not exist
      '2024-10-06T15:15:00.000Z',
      '2024-10-06T15:45:00.000Z',
    ]);
  });
});

describe('prevRun', () => {
  it('is at or before the given instant', () => {
    const every5 = parseCron('*/5 * * * *');
    expect(iso(prevRun(every5, 'UTC', utc('2024-05-01T10:05:00.000Z')))).toBe('2024-05-01T10:05:00.000Z');
    expect(iso(prevRun(every5, 'UTC', utc('2024-05-01T10:04:59.999Z')))).toBe('2024-05-01T10:00:00.000Z');
  });

  it('reaches back across years', () => {
    expect(iso(prevRun(parseCron('0 0 29 2 *'), 'UTC', utc('2104-02-28T00:00:00Z')))).toBe('2096-02-29T00:00:00.000Z');
  });

  it('after clocks fall back, the last run is the last minute before they did', () => {
    // 01:20 EST on 2024-11-03 comes after 01:59 EDT: 01:20-01:59 fired in their first pass.
    const every = parseCron('* * * * *');
    expect(iso(prevRun(every, 'America/New_York', utc('2024-11-03T06:20:00Z')))).toBe('2024-11-03T05:59:00.000Z');
  });
});

/** One minute of a span, read on the wall clock by a formatter the code under test does not use. */
interface WallMinute {
  readonly t: number;
  readonly text: string;
  readonly fields: readonly [y: number, mo: number, d: number, h: number, mi: number, weekday: number];
}

function wallMinutes(zone: string, from: number, to: number): WallMinute[] {
  const f = new Intl.DateTimeFormat('sv-SE', { timeZone: zone, dateStyle: 'short', timeStyle: 'short' });
  const out: WallMinute[] = [];
  for (let t = from; t <= to; t += MINUTE) {
    const text = f.format(t); // "2024-03-31 03:00"
    const [y, mo, d, h, mi] = text.split(/[- :]/).map(Number) as [number, number, number, number, number];
    out.push({ t, text, fields: [y, mo, d, h, mi, new Date(Date.UTC(y, mo - 1, d)).getUTCDay()] });
  }
  return out;
}

/**
 * A reference that knows nothing of the search: a minute fires when its wall time matches and
 * has not been seen before (a repeated wall time fires once, a skipped one never shows).
 */
function referenceRuns(cron: Cron, minutes: readonly WallMinute[]): number[] {
  const seen = new Set<string>();
  const fires: number[] = [];
  for (const { t, text, fields } of minutes) {
    const [, mo, d, h, mi, weekday] = fields;
    const dom = cron.daysOfMonth.includes(d);
    const dow = cron.daysOfWeek.includes(weekday);
    const day = cron.dayOfMonthRestricted && cron.dayOfWeekRestricted ? dom || dow : dom && dow;
    const match = day && cron.months.includes(mo) && cron.hours.includes(h) && cron.minutes.includes(mi);
    if (match && !seen.has(text)) fires.push(t);
    seen.add(text);
  }
  return fires;
}

describe('nextRun and prevRun agree with a minute-by-minute reference', () => {
  // Two days each, around a change of the clocks.
  const spans: [string, string][] = [
    ['Europe/Berlin', '2024-03-30T12:00:00Z'],
    ['Europe/Berlin', '2024-10-26T12:00:00Z'],
    ['America/New_York', '2024-03-09T12:00:00Z'],
    ['America/New_York', '2024-11-02T12:00:00Z'],
    ['Australia/Lord_Howe', '2024-04-06T00:00:00Z'], // back by half an hour
  ];
  const expressions = ['* * * * *', '*/7 * * * *', '30 2 * * *', '0,30 1-3 * * *', '15 * * * *', '0 0 * * SUN'];

  it.each(spans)('%s from %s', (zone, start) => {
    const from = utc(start);
    const to = from + 2 * DAY;
    // A week either side: the reference has seen the wall times before the span, and every
    // expression fires again after it.
    const minutes = wallMinutes(zone, from - 8 * DAY, to + 8 * DAY);
    const wrong: string[] = [];
    for (const text of expressions) {
      const cron = parseCron(text);
      const fires = referenceRuns(cron, minutes);
      let i = 0;
      for (let t = from; t <= to; t += MINUTE) {
        while (fires[i]! <= t) i++;
        // fires[i] is the first fire after t, fires[i - 1] the last at or before it.
        const at = t % (7 * MINUTE) === 0 ? t + 30_000 : t;
        const next = nextRun(cron, zone, at);
        const prev = prevRun(cron, zone, at);
        if (next !== fires[i]) wrong.push(`${text}: next after ${iso(at)} is ${iso(fires[i]!)}, not ${iso(next)}`);
        if (prev !== fires[i - 1]) wrong.push(`${text}: last by ${iso(at)} is ${iso(fires[i - 1]!)}, not ${iso(prev)}`);
      }
    }
    expect(wrong.slice(0, 10)).toEqual([]);
  });
});
