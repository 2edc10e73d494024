/**
 * Which (failpoint, n) pairs the crash sweep runs: a clean run of a scenario says how often
 * each failpoint is reached, and in which window (the kind of step: manager/failpoints.ts).
 * By default each failpoint gets at most `perFailpoint` n, evenly spaced over the first 80%;
 * `every window` takes the first n of each distinct window of each failpoint, armed by its
 * window so that it falls in that window even when the run goes a little differently;
 * `every n` takes them all.
 */
import { FAILPOINTS, type Failpoint } from '../../manager/failpoints.ts';

/** One point to crash at: the n-th time `failpoint` is reached (in the clean run). */
export interface CrashPoint {
  readonly failpoint: Failpoint;
  readonly n: number;
  /** The window's id: the manager is armed at the first time `failpoint` is reached in it. */
  readonly window?: string;
  /** What the window is, as the count file says. */
  readonly about?: string;
}

/** One line of a count file: the n-th time `failpoint` was reached, in which window. */
export interface Reached {
  readonly failpoint: Failpoint;
  readonly n: number;
  readonly window?: string;
  readonly about?: string;
}

/** Every failpoint reached, in order, from a count file (`name` or `name<TAB>id<TAB>window` a line). */
export function readReached(text: string): Reached[] {
  const seen = Object.fromEntries(FAILPOINTS.map((f) => [f, 0])) as Record<Failpoint, number>;
  const out: Reached[] = [];
  for (const line of text.split('\n')) {
    const [name = '', window, about] = line.split('\t');
    if (!(name in seen)) continue;
    const failpoint = name as Failpoint;
    seen[failpoint] += 1;
    out.push({ failpoint, n: seen[failpoint], ...(window ? { window, about: about ?? '' } : {}) });
  }
  return out;
}

/** How often each failpoint was reached, from a count file. */
export function countReached(text: string): Record<Failpoint, number> {
  const counts = Object.fromEntries(FAILPOINTS.map((f) => [f, 0])) as Record<Failpoint, number>;
  for (const r of readReached(text)) counts[r.failpoint] += 1;
  return counts;
}

/** How many distinct windows each failpoint was reached in (lines without a window count as one each). */
export function countWindows(reached: readonly Reached[]): Record<Failpoint, number> {
  const counts = Object.fromEntries(FAILPOINTS.map((f) => [f, 0])) as Record<Failpoint, number>;
  for (const failpoint of FAILPOINTS) counts[failpoint] = chooseWindows(reached, [failpoint]).length;
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

/**
 * One point per distinct window of each failpoint: its first n, in failpoint order then n. A
 * line without a window (an older manager) is a window of its own, run by its n.
 */
export function chooseWindows(
  reached: readonly Reached[],
  failpoints: readonly Failpoint[] = FAILPOINTS,
): CrashPoint[] {
  const seen = new Set<string>();
  const points: CrashPoint[] = [];
  for (const failpoint of failpoints)
    for (const r of reached) {
      if (r.failpoint !== failpoint) continue;
      if (r.window === undefined) {
        points.push({ failpoint, n: r.n });
        continue;
      }
      const key = `${failpoint}\t${r.window}`;
      if (seen.has(key)) continue;
      seen.add(key);
      points.push({ failpoint, n: r.n, window: r.window, about: r.about ?? '' });
    }
  return points;
}
