/**
 * Wall-clock time in an IANA time zone, through Intl (Node's full ICU carries the tz
 * database). A wall time is written as the epoch ms its fields would have in UTC, so calendar
 * arithmetic on it is Date.UTC's. Pure: the formatters are cached, nothing reads the clock.
 */

/** A `timeZone` that is not an IANA time zone name. */
export class TimeZoneError extends Error {
  override readonly name = 'TimeZoneError';
  readonly code = 'ERR_TIME_ZONE';
  /** The name as the user wrote it. */
  readonly timeZone: string;

  constructor(timeZone: string, options?: { cause?: unknown }) {
    super(
      timeZone === ''
        ? 'timeZone is empty: leave it out for UTC, or name an IANA time zone such as Europe/Berlin'
        : `timeZone "${timeZone}" is not an IANA time zone name (such as UTC, Europe/Berlin or America/New_York)`,
      options,
    );
    this.timeZone = timeZone;
  }
}

/** The characters of an IANA time zone name, for a CRD `pattern`: offsets such as +01:00 are not names. */
export const TIME_ZONE_PATTERN = '^[A-Za-z][A-Za-z0-9_+/-]*$';
const nameShape = new RegExp(TIME_ZONE_PATTERN);

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter that reads a zone's wall-clock fields; throws TimeZoneError for an unknown zone. */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f) return f;
  if (!nameShape.test(timeZone)) throw new TimeZoneError(timeZone);
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch (cause) {
    throw new TimeZoneError(timeZone, { cause });
  }
  formatters.set(timeZone, f);
  return f;
}

/** Whether `timeZone` is an IANA time zone name this runtime knows (`UTC`, `Europe/Berlin`...). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** Returns `timeZone` when it is an IANA time zone name; throws a TimeZoneError that says why not. */
export function checkTimeZone(timeZone: string): string {
  formatter(timeZone);
  return timeZone;
}

/** The wall-clock time in `timeZone` at the instant `ms`, as the epoch ms of the same fields in UTC. */
export function wallTime(timeZone: string, ms: number): number {
  const f: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(ms)) if (p.type !== 'literal') f[p.type] = Number(p.value);
  const wholeSecond = Date.UTC(f.year!, f.month! - 1, f.day, f.hour, f.minute, f.second);
  return wholeSecond + (ms - Math.floor(ms / 1000) * 1000);
}

/** The zone's offset from UTC at the instant `ms`, in ms (Berlin in winter: 3,600,000). */
export const offsetAt = (timeZone: string, ms: number): number => wallTime(timeZone, ms) - ms;

const DAY_MS = 86_400_000;

/**
 * The first instant whose wall-clock time in `timeZone` is `wall`; null when the zone skips
 * that wall time (the hour lost when clocks spring forward). A wall time the zone repeats
 * (clocks falling back) gives its first occurrence. Offsets are read a day either side, so
 * any single transition near `wall` is seen, however far it moves the clock.
 */
export function firstInstant(timeZone: string, wall: number): number | null {
  const before = offsetAt(timeZone, wall - DAY_MS);
  const after = offsetAt(timeZone, wall + DAY_MS);
  const offsets = before === after ? [before] : [before, after, offsetAt(timeZone, wall)];
  let first: number | null = null;
  for (const offset of new Set(offsets)) {
    const instant = wall - offset;
    if (wallTime(timeZone, instant) === wall && (first === null || instant < first)) first = instant;
  }
  return first;
}
