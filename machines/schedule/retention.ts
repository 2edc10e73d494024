/**
 * Which of a schedule's EtcdSnapshots to delete. Successful snapshots are the backups: keepLast
 * and maxAge prune them, but never the newest one, so a schedule whose runs keep failing still
 * holds its last good backup however old, nor the newest one a restore proved (spec.verify). Failed ones are history, limited by
 * failedHistoryLimit. A snapshot still running or pending is never touched. Pure: `now` is an
 * argument.
 */

/** An EtcdSnapshot's phase. */
export type SnapshotPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** An EtcdSnapshot the schedule owns, as retention sees it. Times are epoch ms. */
export interface OwnedSnapshot {
  readonly name: string;
  readonly phase: SnapshotPhase;
  readonly createdAt: number;
  /** When it succeeded or failed; null while in flight (a finished one without it counts from createdAt). */
  readonly completedAt: number | null;
  /** What a restore proved of it (spec.verify), when it was checked: verified or not, and when. */
  readonly verified?: { readonly ok: boolean; readonly at: number } | null;
}

/** The schedule's limits. keepLast and maxAge may each be absent; at least one is expected. */
export interface RetentionPolicy {
  /** Keep the newest N successful snapshots (N >= 1); null for no count limit. */
  readonly keepLast: number | null;
  /** Delete successful snapshots older than this many ms (parseDuration), except the newest; null for no age limit. */
  readonly maxAgeMs: number | null;
  /** Keep the newest N failed snapshots (N >= 0). */
  readonly failedHistoryLimit: number;
}

/** Why a snapshot is deleted: the limit that drops it. */
export type PruneReason = 'keepLast' | 'maxAge' | 'failedHistoryLimit';

/** A snapshot to delete and why. */
export interface Prune {
  readonly name: string;
  readonly reason: PruneReason;
}

/** When a finished snapshot counts from: its completion, else its creation. */
const finishedAt = (s: OwnedSnapshot): number => s.completedAt ?? s.createdAt;

/** Newest first; ties by creation, then by name, so the answer never depends on input order. */
const newestFirst = (a: OwnedSnapshot, b: OwnedSnapshot): number =>
  finishedAt(b) - finishedAt(a) || b.createdAt - a.createdAt || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0);

/** The snapshots to delete at `now`, oldest first. Throws a RangeError for a limit out of range. */
export function prune(snapshots: readonly OwnedSnapshot[], policy: RetentionPolicy, now: number): Prune[] {
  const { keepLast, maxAgeMs, failedHistoryLimit } = policy;
  if (keepLast !== null && !(Number.isInteger(keepLast) && keepLast >= 1)) {
    throw new RangeError(`keepLast ${keepLast} is not a whole number of 1 or more`);
  }
  if (maxAgeMs !== null && !(maxAgeMs > 0)) throw new RangeError(`maxAge of ${maxAgeMs} ms is not positive`);
  if (!(Number.isInteger(failedHistoryLimit) && failedHistoryLimit >= 0)) {
    throw new RangeError(`failedHistoryLimit ${failedHistoryLimit} is not a whole number of 0 or more`);
  }
  const out: { snapshot: OwnedSnapshot; reason: PruneReason }[] = [];
  const succeeded = snapshots.filter((s) => s.phase === 'Succeeded').sort(newestFirst);
  // The newest one a restore proved is kept beside the newest N: a schedule verifying every Nth
  // run never prunes its last proven backup for unproven ones.
  const proven = succeeded.find((s) => s.verified?.ok);
  succeeded.forEach((snapshot, i) => {
    if (snapshot === proven) return;
    // i > 0: the newest successful snapshot is never too old to keep.
    if (keepLast !== null && i >= keepLast) out.push({ snapshot, reason: 'keepLast' });
    else if (maxAgeMs !== null && i > 0 && now - finishedAt(snapshot) > maxAgeMs)
      out.push({ snapshot, reason: 'maxAge' });
  });
  const failed = snapshots.filter((s) => s.phase === 'Failed').sort(newestFirst);
  for (const snapshot of failed.slice(failedHistoryLimit)) out.push({ snapshot, reason: 'failedHistoryLimit' });
  return out
    .sort((a, b) => newestFirst(b.snapshot, a.snapshot))
    .map(({ snapshot, reason }) => ({ name: snapshot.name, reason }));
}

/** A maxAge that is not a duration such as 7d, 12h, 90m, 1h30m or 45s. */
export class DurationError extends Error {
  override readonly name = 'DurationError';
  readonly code = 'ERR_DURATION';
}

/**
 * A CRD `pattern` for durations: whole numbers with units d, h, m, s, largest first, each at
 * most once (7d, 12h, 1h30m, 45s). A day is 24 hours of elapsed time.
 */
export const DURATION_PATTERN =
  '^([0-9]+d([0-9]+h)?([0-9]+m)?([0-9]+s)?|[0-9]+h([0-9]+m)?([0-9]+s)?|[0-9]+m([0-9]+s)?|[0-9]+s)$';

const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
const UNITS = Object.keys(UNIT_MS);

/** Parses a duration such as 7d, 12h, 90m, 1h30m or 45s into ms; throws a DurationError that says what is wrong. */
export function parseDuration(text: string): number {
  const fail = (problem: string): never => {
    throw new DurationError(
      `duration "${text}" ${problem} (write whole numbers with d, h, m or s, largest first, as in 7d, 12h or 1h30m)`,
    );
  };
  if (text === '') fail('is empty');
  let ms = 0;
  let lastUnit = -1;
  for (const part of text.matchAll(/([0-9]*)([^0-9]?)/gy)) {
    const [whole, digits = '', unit = ''] = part;
    if (whole === '') break;
    if (digits === '') fail(`has "${unit}" without a number before it`);
    if (unit === '') fail(`ends in "${digits}" without a unit`);
    const u = UNITS.indexOf(unit);
    if (u < 0) fail(`has an unknown unit "${unit}"`);
    if (u <= lastUnit) fail(`has "${unit}" after "${UNITS[lastUnit]!}"`);
    lastUnit = u;
    ms += Number(digits) * UNIT_MS[unit]!;
  }
  if (!Number.isSafeInteger(ms)) fail('is too long');
  if (ms === 0) fail('is zero');
  return ms;
}
