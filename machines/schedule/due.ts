/**
 * Which scheduled run is due now, as Kubernetes CronJob decides it: at most one run, the most
 * recent fire time since the last one, and only while it is within startingDeadlineSeconds;
 * the fire times it passes over are missed and counted. Pure: `now` is an argument.
 */
import type { Cron } from './cron.ts';
import { nextRun, prevRun } from './runs.ts';

/** What decides whether a run is due. Times are epoch ms. */
export interface DueInput {
  readonly cron: Cron;
  /** An IANA time zone name. */
  readonly timeZone: string;
  /** The fire time of the last run started; null before the first. */
  readonly lastScheduleTime: number | null;
  /** The schedule's creation: fire times at or before it never run. */
  readonly creationTime: number;
  /** How late a run may start after its fire time; null for no limit. */
  readonly startingDeadlineSeconds: number | null;
  readonly now: number;
}

/** The answer: what to run now, what was missed, and when to look again. */
export interface Due {
  /** The most recent fire time since the last run, at or before now; null when none passed. */
  readonly latest: number | null;
  /** The fire time to run now: `latest` when within the starting deadline, else null. */
  readonly run: number | null;
  /** Fire times since the last run that will never run (older than `latest`, or late), counted up to MISSED_COUNT_LIMIT. */
  readonly missed: number;
  /** Whether counting stopped at MISSED_COUNT_LIMIT, so `missed` is a lower bound. */
  readonly missedCapped: boolean;
  /** The first fire time after now (and after the last run): when to wake. Null when it never fires again. */
  readonly next: number | null;
}

/** How many missed fire times `due` counts before it stops (Kubernetes warns past 100). */
export const MISSED_COUNT_LIMIT = 100;

/**
 * Which run is due at `now`. A fire time runs at most once: only those after the last run (or
 * after creation) count, and a last schedule time ahead of now (a clock set back) is waited out.
 */
export function due(input: DueInput): Due {
  const { cron, timeZone, now } = input;
  const earliest = input.lastScheduleTime ?? input.creationTime;
  const next = nextRun(cron, timeZone, Math.max(now, earliest));
  const latest = prevRun(cron, timeZone, now);
  if (latest === null || latest <= earliest) return { latest: null, run: null, missed: 0, missedCapped: false, next };

  const deadline = input.startingDeadlineSeconds;
  const run = deadline === null || now - latest <= deadline * 1000 ? latest : null;
  let missed = run === null ? 1 : 0;
  for (let t = nextRun(cron, timeZone, earliest); t !== null && t < latest; t = nextRun(cron, timeZone, t)) {
    if (missed === MISSED_COUNT_LIMIT) return { latest, run, missed, missedCapped: true, next };
    missed += 1;
  }
  return { latest, run, missed, missedCapped: false, next };
}
