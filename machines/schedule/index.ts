/** The time logic of EtcdSnapshotSchedule: cron expressions, time zones, due runs and retention. */
export { CRON_FIELDS, CRON_PATTERN, CronError, parseCron, type Cron, type CronField } from './cron.ts';
export { SEARCH_YEARS, nextRun, prevRun } from './runs.ts';
export { TIME_ZONE_PATTERN, TimeZoneError, checkTimeZone, isTimeZone } from './zone.ts';
export { MISSED_COUNT_LIMIT, due, type Due, type DueInput } from './due.ts';
export {
  DURATION_PATTERN,
  DurationError,
  parseDuration,
  prune,
  type OwnedSnapshot,
  type Prune,
  type PruneReason,
  type RetentionPolicy,
  type SnapshotPhase,
} from './retention.ts';
