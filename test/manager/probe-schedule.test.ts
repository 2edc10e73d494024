import { describe, expect, it } from 'vitest';
import { nextProbeDelay, ProbeSchedule, type RestKind } from '../../manager/probe-schedule.ts';

const o = { baseMs: 15_000, maxMs: 120_000 };

describe('probe schedule', () => {
  it.each<[string, number | undefined, RestKind, number | null]>([
    ['a first quiet look waits the base interval', undefined, 'quiet', 15_000],
    ['each quiet look doubles the wait', 15_000, 'quiet', 30_000],
    ['doubling stops at the longest wait', 60_000, 'quiet', 120_000],
    ['a quiet cluster at the longest wait stays there', 120_000, 'quiet', 120_000],
    ['a change starts over at the base interval', 120_000, 'resting', 15_000],
    ['a resting state that rechecks on time keeps the base interval', 15_000, 'resting', 15_000],
    ['a parked cluster has no timer: watch events wake it', 60_000, 'dormant', null],
    ['a parked cluster has no timer from its first look', undefined, 'dormant', null],
  ])('%s', (_, previous, kind, expected) => {
    expect(nextProbeDelay(previous, kind, o)).toBe(expected);
  });

  it('never waits less than the base interval, whatever the longest wait says', () => {
    expect(nextProbeDelay(15_000, 'quiet', { baseMs: 15_000, maxMs: 5_000 })).toBe(15_000);
  });

  it('backs a quiet cluster off step by step, and starts over after a change or after parking', () => {
    const s = new ProbeSchedule(o);
    const quiet = Array.from({ length: 6 }, () => s.next('a', 'quiet'));
    expect(quiet).toEqual([15_000, 30_000, 60_000, 120_000, 120_000, 120_000]);
    expect(s.next('a', 'resting')).toBe(15_000);
    expect(s.next('a', 'quiet')).toBe(30_000);
    expect(s.next('a', 'dormant')).toBeNull();
    expect(s.next('a', 'quiet')).toBe(15_000);
  });

  it('keeps one schedule per cluster, and a reset starts one over', () => {
    const s = new ProbeSchedule(o);
    s.next('a', 'quiet');
    s.next('a', 'quiet');
    expect(s.next('b', 'quiet')).toBe(15_000);
    s.reset('a');
    expect(s.next('a', 'quiet')).toBe(15_000);
  });
});
