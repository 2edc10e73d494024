/**
 * Which (failpoint, n) pairs the crash sweep runs: a clean run of a scenario says how often
 * each failpoint is reached; every pair reached is a candidate, and unless every pair is asked
 * for, each failpoint gets at most `perFailpoint` of them, evenly spaced, first and last always.
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
 * 1..reached when `per` is Infinity or covers them all; else every k-th from 1 with
 * k = ceil((reached - 1) / (per - 1)), plus `reached` itself, so first and last are always in.
 */
export function spread(reached: number, per: number): number[] {
  if (reached <= 0) return [];
  if (per >= reached) return Array.from({ length: reached }, (_, i) => i + 1);
  if (per <= 1) return [1];
  const k = Math.ceil((reached - 1) / (per - 1));
  const ns = [];
  for (let n = 1; n < reached; n += k) ns.push(n);
  return [...ns, reached];
}

/** The points to sweep, in failpoint order then n. */
export function choosePoints(counts: Record<Failpoint, number>, per: number): CrashPoint[] {
  return FAILPOINTS.flatMap((failpoint) => spread(counts[failpoint], per).map((n) => ({ failpoint, n })));
}
