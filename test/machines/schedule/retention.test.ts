import { describe, expect, it } from 'vitest';
import {
  DURATION_PATTERN,
  DurationError,
  parseDuration,
  prune,
  type OwnedSnapshot,
  type RetentionPolicy,
  type SnapshotPhase,
} from '../../../machines/schedule/retention.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const now = Date.parse('2024-05-10T00:00:00Z');

/** A snapshot created `ageDays` ago that took ten minutes. */
const snap = (name: string, phase: SnapshotPhase, ageDays: number): OwnedSnapshot => {
  const createdAt = now - ageDays * DAY;
  const finished = phase === 'Succeeded' || phase === 'Failed';
  return { name, phase, createdAt, completedAt: finished ? createdAt + 10 * 60_000 : null };
};
const policy = (p: Partial<RetentionPolicy>): RetentionPolicy => ({
  keepLast: null,
  maxAgeMs: null,
  failedHistoryLimit: 1,
  ...p,
});

describe('prune: successful snapshots', () => {
  const five = [0, 1, 2, 3, 4].map((d) => snap(`ok-${d}`, 'Succeeded', d));

  it('keepLast keeps the newest N and deletes the rest, oldest first', () => {
    expect(prune(five, policy({ keepLast: 3 }), now)).toEqual([
      { name: 'ok-4', reason: 'keepLast' },
      { name: 'ok-3', reason: 'keepLast' },
    ]);
  });

  it('keepLast at or above the count deletes nothing', () => {
    expect(prune(five, policy({ keepLast: 5 }), now)).toEqual([]);
    expect(prune(five, policy({ keepLast: 50 }), now)).toEqual([]);
  });

  it('keepLast counts successful snapshots only: failed and running ones do not push good ones out', () => {
    const mixed = [
      snap('ok-old', 'Succeeded', 5),
      snap('ok-new', 'Succeeded', 3),
      snap('failed-1', 'Failed', 2),
      snap('failed-2', 'Failed', 1),
      snap('running', 'Running', 0),
    ];
    expect(prune(mixed, policy({ keepLast: 2, failedHistoryLimit: 5 }), now)).toEqual([]);
  });

  it('maxAge deletes the successful snapshots older than it', () => {
    expect(prune(five, policy({ maxAgeMs: 2.5 * DAY }), now)).toEqual([
      { name: 'ok-4', reason: 'maxAge' },
      { name: 'ok-3', reason: 'maxAge' },
    ]);
  });

  it('maxAge counts from completion, and a snapshot exactly that old stays', () => {
    const s = snap('ok', 'Succeeded', 2);
    const newer = snap('newer', 'Succeeded', 0);
    const age = now - s.completedAt!;
    expect(prune([s, newer], policy({ maxAgeMs: age }), now)).toEqual([]);
    expect(prune([s, newer], policy({ maxAgeMs: age - 1 }), now)).toEqual([{ name: 'ok', reason: 'maxAge' }]);
  });

  it('maxAge never deletes the newest successful snapshot, however old: the last good backup stays', () => {
    const stale = [snap('ok-9', 'Succeeded', 9), snap('ok-8', 'Succeeded', 8), snap('failed', 'Failed', 1)];
    expect(prune(stale, policy({ maxAgeMs: DAY }), now)).toEqual([{ name: 'ok-9', reason: 'maxAge' }]);
    expect(prune([snap('only', 'Succeeded', 400)], policy({ maxAgeMs: DAY }), now)).toEqual([]);
  });

  it('keepLast and maxAge never delete the newest snapshot a restore proved; an older proven one goes', () => {
    const proved = (s: OwnedSnapshot, ok = true): OwnedSnapshot => ({ ...s, verified: { ok, at: s.completedAt! } });
    const runs = [
      snap('ok-0', 'Succeeded', 0),
      proved(snap('ok-1', 'Succeeded', 1), false),
      snap('ok-2', 'Succeeded', 2),
      proved(snap('ok-3', 'Succeeded', 3)),
      proved(snap('ok-4', 'Succeeded', 4)),
    ];
    expect(prune(runs, policy({ keepLast: 1 }), now)).toEqual([
      { name: 'ok-4', reason: 'keepLast' },
      { name: 'ok-2', reason: 'keepLast' },
      { name: 'ok-1', reason: 'keepLast' },
    ]);
    expect(prune(runs, policy({ maxAgeMs: DAY / 2 }), now)).toEqual([
      { name: 'ok-4', reason: 'maxAge' },
      { name: 'ok-2', reason: 'maxAge' },
      { name: 'ok-1', reason: 'maxAge' },
    ]);
  });

  it('a newer snapshot still running does not make the last good one old enough to delete', () => {
    const s = [snap('ok-9', 'Succeeded', 9), snap('running', 'Running', 0), snap('pending', 'Pending', 0)];
    expect(prune(s, policy({ maxAgeMs: DAY }), now)).toEqual([]);
  });

  it('keepLast and maxAge together: a snapshot must pass both to stay', () => {
    expect(prune(five, policy({ keepLast: 4, maxAgeMs: 2.5 * DAY }), now)).toEqual([
      { name: 'ok-4', reason: 'keepLast' },
      { name: 'ok-3', reason: 'maxAge' },
    ]);
    expect(prune(five, policy({ keepLast: 2, maxAgeMs: 30 * DAY }), now)).toEqual([
      { name: 'ok-4', reason: 'keepLast' },
      { name: 'ok-3', reason: 'keepLast' },
      { name: 'ok-2', reason: 'keepLast' },
    ]);
  });

  it('no limits on successful snapshots keeps them all', () => {
    expect(prune(five, policy({}), now)).toEqual([]);
  });

  it('a finished snapshot without a completion time counts from its creation', () => {
    const s: OwnedSnapshot = { name: 'odd', phase: 'Succeeded', createdAt: now - 3 * DAY, completedAt: null };
    expect(prune([s, snap('new', 'Succeeded', 0)], policy({ maxAgeMs: 2 * DAY }), now)).toEqual([
      { name: 'odd', reason: 'maxAge' },
    ]);
  });

  it('a completion time ahead of now (clock skew) is young, not deleted', () => {
    const future: OwnedSnapshot = { name: 'future', phase: 'Succeeded', createdAt: now, completedAt: now + HOUR };
    expect(prune([snap('old', 'Succeeded', 5), future], policy({ maxAgeMs: DAY }), now)).toEqual([
      { name: 'old', reason: 'maxAge' },
    ]);
  });

  it('the answer does not depend on the order of the input, and ties break by name', () => {
    const tied = ['c', 'a', 'b'].map((n) => ({ ...snap(n, 'Succeeded', 1), name: n }));
    const out = prune(tied, policy({ keepLast: 1 }), now);
    expect(out).toEqual([
      { name: 'a', reason: 'keepLast' },
      { name: 'b', reason: 'keepLast' },
    ]);
    expect(prune([...tied].reverse(), policy({ keepLast: 1 }), now)).toEqual(out);
    expect(prune([...five].reverse(), policy({ keepLast: 2 }), now)).toEqual(prune(five, policy({ keepLast: 2 }), now));
  });

  it('orders by completion: a long snapshot that finished last is the newest', () => {
    const long: OwnedSnapshot = {
      name: 'long',
      phase: 'Succeeded',
      createdAt: now - 5 * HOUR,
      completedAt: now - HOUR,
    };
    const quick: OwnedSnapshot = {
      name: 'quick',
      phase: 'Succeeded',
      createdAt: now - 3 * HOUR,
      completedAt: now - 2 * HOUR,
    };
    expect(prune([long, quick], policy({ keepLast: 1 }), now)).toEqual([{ name: 'quick', reason: 'keepLast' }]);
  });
});

describe('prune: in-flight and failed snapshots', () => {
  it('never deletes a Running or Pending snapshot, however old or many', () => {
    const inFlight = [snap('r', 'Running', 30), snap('p', 'Pending', 40), snap('r2', 'Running', 50)];
    expect(prune(inFlight, policy({ keepLast: 1, maxAgeMs: HOUR, failedHistoryLimit: 0 }), now)).toEqual([]);
  });

  it('failedHistoryLimit keeps the newest failed ones', () => {
    const failed = [snap('f-3', 'Failed', 3), snap('f-1', 'Failed', 1), snap('f-2', 'Failed', 2)];
    expect(prune(failed, policy({ failedHistoryLimit: 1 }), now)).toEqual([
      { name: 'f-3', reason: 'failedHistoryLimit' },
      { name: 'f-2', reason: 'failedHistoryLimit' },
    ]);
    expect(prune(failed, policy({ failedHistoryLimit: 0 }), now).map((p) => p.name)).toEqual(['f-3', 'f-2', 'f-1']);
    expect(prune(failed, policy({ failedHistoryLimit: 3 }), now)).toEqual([]);
  });

  it('failed ones are not pruned by maxAge or keepLast, and do not count toward keepLast', () => {
    const s = [snap('f-old', 'Failed', 30), snap('ok', 'Succeeded', 0)];
    expect(prune(s, policy({ keepLast: 1, maxAgeMs: DAY, failedHistoryLimit: 1 }), now)).toEqual([]);
  });

  it('everything at once, oldest first', () => {
    const all = [
      snap('ok-0', 'Succeeded', 0),
      snap('ok-2', 'Succeeded', 2),
      snap('ok-6', 'Succeeded', 6),
      snap('ok-8', 'Succeeded', 8),
      snap('f-1', 'Failed', 1),
      snap('f-7', 'Failed', 7),
      snap('run', 'Running', 0),
    ];
    expect(prune(all, policy({ keepLast: 3, maxAgeMs: 7 * DAY, failedHistoryLimit: 1 }), now)).toEqual([
      { name: 'ok-8', reason: 'keepLast' },
      { name: 'f-7', reason: 'failedHistoryLimit' },
    ]);
  });
});

describe('prune: limits out of range', () => {
  it.each<[Partial<RetentionPolicy>, string]>([
    [{ keepLast: 0 }, 'keepLast 0 is not a whole number of 1 or more'],
    [{ keepLast: 1.5 }, 'keepLast 1.5 is not a whole number of 1 or more'],
    [{ maxAgeMs: 0 }, 'maxAge of 0 ms is not positive'],
    [{ maxAgeMs: Number.NaN }, 'maxAge of NaN ms is not positive'],
    [{ failedHistoryLimit: -1 }, 'failedHistoryLimit -1 is not a whole number of 0 or more'],
  ])('%j', (p, message) => {
    expect(() => prune([], policy(p), now)).toThrow(new RangeError(message));
  });
});

describe('parseDuration', () => {
  it.each([
    ['7d', 7 * DAY],
    ['12h', 12 * HOUR],
    ['90m', 90 * 60_000],
    ['1h30m', 90 * 60_000],
    ['45s', 45_000],
    ['1d12h', 36 * HOUR],
    ['2d3h4m5s', 2 * DAY + 3 * HOUR + 4 * 60_000 + 5000],
    ['0d1s', 1000],
    ['365d', 365 * DAY],
    ['007m', 7 * 60_000],
  ])('%s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
    expect(new RegExp(DURATION_PATTERN).test(text)).toBe(true);
  });

  it.each([
    ['', 'is empty'],
    ['7', 'ends in "7" without a unit'],
    ['d', 'has "d" without a number before it'],
    ['7x', 'has an unknown unit "x"'],
    ['7D', 'has an unknown unit "D"'],
    ['1w', 'has an unknown unit "w"'],
    ['1.5h', 'has an unknown unit "."'],
    ['-1h', 'has "-" without a number before it'],
    [' 7d', 'has " " without a number before it'],
    ['7d ', 'has " " without a number before it'],
    ['30m1h', 'has "h" after "m"'],
    ['1h1h', 'has "h" after "h"'],
    ['1h30', 'ends in "30" without a unit'],
    ['0s', 'is zero'],
    ['0d0h', 'is zero'],
    ['99999999999999999d', 'is too long'],
  ])('%j %s', (text, problem) => {
    let error: unknown;
    try {
      parseDuration(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DurationError);
    expect((error as DurationError).code).toBe('ERR_DURATION');
    expect((error as DurationError).message).toBe(
      `duration "${text}" ${problem} (write whole numbers with d, h, m or s, largest first, as in 7d, 12h or 1h30m)`,
    );
  });

  it('DURATION_PATTERN refuses what parseDuration refuses for its form', () => {
    const pattern = new RegExp(DURATION_PATTERN);
    for (const text of ['', '7', 'd', '7x', '1.5h', '30m1h', '1h1h', '1h30', ' 7d'])
      expect(pattern.test(text)).toBe(false);
  });
});
