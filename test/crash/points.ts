/**
 * Which (failpoint, n) pairs the crash sweep runs: a clean run of a scenario says how often
 * each failpoint is reached; every pair reached is a candidate, and unless every pair is asked
 * for, each failpoint gets at most `perFailpoint` of them, evenly spaced over the first 80%.
 */
import { FAILPOINTS, type Failpoint } from '../../manager/failpoints.ts';

/** One point to crash at: the n-th time `failpoint` is reached. */
export interface CrashPoint {
  readonly failpoint: Failpoint;
  readonly n: number;
}

/** How often each failpoint was reached, from a count file (one name per line). */
export function countReached(text: string): Record<Failpoint, number> {
  const counts = Object.fromEntries(FAILPOINTS.map((f) => [f, 0])) as Record<Failpoint, number>;
  for (const line of text.split('\n')) if (line in counts) counts[line as Failpoint] += 1;
  return counts;
}

/**
 * How far into a clean run's count a sampled point may go. The number of steps differs from
 * run to run (a bootstrap of 3 took 68, 80 and 88), so a point near the end of one run is
 * often past the end of the next: samples stay within the first 80%.
 */
export const SAMPLE_REACH = 0.8;

/**
 * 1..reached when `per` is Infinity or covers them all; else `per` points evenly spaced from 1
 * to 80% of `reached` (SAMPLE_REACH), first and last of that range always in.
 */
export function spread(reached: number, per: number): number[] {
  if (reached <= 0) return [];
  if (per >= reached) return Array.from({ length: reached }, (_, i) => i + 1);
  if (per <= 1) return [1];
  const last = Math.max(1, Math.floor(reached * SAMPLE_REACH));
  const ns = Array.from({ length: per }, (_, i) => 1 + Math.round(((last - 1) * i) / (per - 1)));
  return [...new Set(ns)];
}

/** The points to sweep, in failpoint order then n. */
export function choosePoints(counts: Record<Failpoint, number>, per: number): CrashPoint[] {
  return FAILPOINTS.flatMap((failpoint) => spread(counts[failpoint], per).map((n) => ({ failpoint, n })));
}
