/**
 * When a parsed cron expression fires in a time zone. Matching wall-clock minutes are walked
 * in calendar order (Date.UTC arithmetic on wall time), and each is turned into an instant:
 * a wall time the zone skips (clocks spring forward) does not fire, as in Kubernetes; a wall
 * time the zone repeats (clocks fall back) fires once, at its first occurrence.
 */
import type { Cron } from './cron.ts';
import { firstInstant, offsetAt, wallTime } from './zone.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/**
 * How far the walk goes before it answers null. An expression that can fire at all fires
 * within 8 years (February 29 across 2100, which is not a leap year).
 */
export const SEARCH_YEARS = 10;
const SEARCH_MS = SEARCH_YEARS * 366 * DAY_MS;

/** The first time `cron` fires in `timeZone` strictly after `afterMs` (epoch ms); null if none within SEARCH_YEARS. */
export function nextRun(cron: Cron, timeZone: string, afterMs: number): number | null {
  const start = Math.floor(wallTime(timeZone, afterMs) / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  for (let wall = nextWall(cron, start, start + SEARCH_MS); wall !== null;) {
    const instant = firstInstant(timeZone, wall);
    // After clocks fall back, the repeated wall times already fired at their first occurrence.
    if (instant !== null && instant > afterMs) return instant;
    wall = nextWall(cron, wall + MINUTE_MS, start + SEARCH_MS);
  }
  return null;
}

/** The last time `cron` fires in `timeZone` at or before `atMs` (epoch ms); null if none within SEARCH_YEARS. */
export function prevRun(cron: Cron, timeZone: string, atMs: number): number | null {
  const start = Math.floor(highWater(timeZone, atMs) / MINUTE_MS) * MINUTE_MS;
  for (let wall = prevWall(cron, start, start - SEARCH_MS); wall !== null;) {
    const instant = firstInstant(timeZone, wall);
    if (instant !== null && instant <= atMs) return instant;
    wall = prevWall(cron, wall - MINUTE_MS, start - SEARCH_MS);
  }
  return null;
}

/**
 * At least the latest wall-clock time shown at or before `atMs`, and at most an hour or so past
 * it. Just after clocks fall back the wall clock reads earlier than it already has: until it
 * is back where it was, the walk starts from the offset before the change.
 */
function highWater(timeZone: string, atMs: number): number {
  const now = offsetAt(timeZone, atMs);
  const before = offsetAt(timeZone, atMs - DAY_MS);
  const catchingUp = before > now && offsetAt(timeZone, atMs - (before - now)) !== now;
  return atMs + (catchingUp ? before : now);
}

/** Whether the day of `date` (wall time) matches: either day field when both are restricted, else both. */
function dayMatches(cron: Cron, date: Date): boolean {
  const dom = cron.daysOfMonth.includes(date.getUTCDate());
  const dow = cron.daysOfWeek.includes(date.getUTCDay());
  return cron.dayOfMonthRestricted && cron.dayOfWeekRestricted ? dom || dow : dom && dow;
}

const firstAtOrAfter = (values: readonly number[], v: number): number | undefined => values.find((x) => x >= v);
const lastAtOrBefore = (values: readonly number[], v: number): number | undefined => values.findLast((x) => x <= v);

/** The first matching wall-clock minute at or after `wall`, or null past `limit`. */
function nextWall(cron: Cron, wall: number, limit: number): number | null {
  while (wall <= limit) {
    const d = new Date(wall);
    const [y, mo, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
    if (!cron.months.includes(mo + 1)) {
      wall = Date.UTC(y, mo + 1, 1);
    } else if (!dayMatches(cron, d)) {
      wall = Date.UTC(y, mo, day + 1);
    } else {
      const hour = firstAtOrAfter(cron.hours, h);
      if (hour === undefined) wall = Date.UTC(y, mo, day + 1);
      else if (hour !== h) wall = Date.UTC(y, mo, day, hour);
      else {
        const minute = firstAtOrAfter(cron.minutes, d.getUTCMinutes());
        if (minute !== undefined) return Date.UTC(y, mo, day, h, minute);
        wall = Date.UTC(y, mo, day, h + 1);
      }
    }
  }
  return null;
}

/** The last matching wall-clock minute at or before `wall`, or null before `limit`. */
function prevWall(cron: Cron, wall: number, limit: number): number | null {
  while (wall >= limit) {
    const d = new Date(wall);
    const [y, mo, day, h] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()];
    if (!cron.months.includes(mo + 1)) {
      wall = Date.UTC(y, mo, 1) - MINUTE_MS;
    } else if (!dayMatches(cron, d)) {
      wall = Date.UTC(y, mo, day) - MINUTE_MS;
    } else {
      const hour = lastAtOrBefore(cron.hours, h);
      if (hour === undefined) wall = Date.UTC(y, mo, day) - MINUTE_MS;
      else if (hour !== h) wall = Date.UTC(y, mo, day, hour, 59);
      else {
        const minute = lastAtOrBefore(cron.minutes, d.getUTCMinutes());
        if (minute !== undefined) return Date.UTC(y, mo, day, h, minute);
        wall = Date.UTC(y, mo, day, h) - MINUTE_MS;
      }
    }
  }
  return null;
}
