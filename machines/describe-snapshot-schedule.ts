/**
 * What a user reads about a schedule machine's state: the step as a CamelCase reason, and a
 * message saying what it does, what it waits for and when it fires next.
 */
import { parseCron } from './schedule/index.ts';
import { activeSnapshot, dueNow, nextScheduleTime, type ScheduleContext } from './snapshot-schedule-decide.ts';

/** A user-facing description of a schedule machine state. */
export interface DescribedSchedule {
  readonly step: string;
  readonly message: string;
}

const iso = (ms: number | null | undefined): string => (ms == null ? 'never' : new Date(ms).toISOString());

const retrying = (c: ScheduleContext): string =>
  c.lastError ? `; the last try failed (${c.lastError.code}: ${c.lastError.message}) and is retried with back-off` : '';

/** The cron parser's warnings (never fires, leap years only, either-day rule), if any. */
function warnings(c: ScheduleContext): string {
  if (!c.spec || c.invalid !== null) return '';
  const w = parseCron(c.spec.schedule).warnings;
  return w.length > 0 ? ` (note: ${w.join('; ')})` : '';
}

/** The step and message of a schedule machine state (its dotted path) and context. */
export function describeSchedule(path: string, c: ScheduleContext): DescribedSchedule {
  const [top = 'pending'] = path.split('.');
  const cluster = `EtcdCluster ${c.schedule.cluster}`;
  const zone = c.spec?.timeZone ?? 'UTC';
  switch (top) {
    case 'idle': {
      const next = nextScheduleTime(c);
      return {
        step: 'Scheduled',
        message:
          next === null
            ? `the schedule "${c.spec?.schedule ?? ''}" never fires again in ${zone}${warnings(c)}`
            : `next snapshot of ${cluster} at ${iso(next)} (schedule "${c.spec?.schedule ?? ''}" in ${zone})${warnings(c)}`,
      };
    }
    case 'suspended':
      return {
        step: 'Suspended',
        message: 'suspended: no snapshot starts and retention deletes none; set suspend: false to resume',
      };
    case 'invalid':
      return {
        step: 'InvalidSpec',
        message: `${c.invalid ?? 'the spec is not valid'}; nothing runs until it is fixed`,
      };
    case 'busy':
      return {
        step: 'WaitingForPrevious',
        message: `the run due at ${iso(dueNow(c)?.run)} waits for EtcdSnapshot ${activeSnapshot(c)?.name ?? ''} to finish (concurrencyPolicy Forbid)`,
      };
    case 'creating':
      return {
        step: 'CreatingSnapshot',
        message: `creating EtcdSnapshot ${c.run?.name ?? ''} of ${cluster} for the run due at ${iso(c.run?.scheduledAt)}${retrying(c)}`,
      };
    case 'pruning':
      return {
        step: 'Pruning',
        message: `deleting EtcdSnapshot ${c.pruning?.name ?? ''}, which retention (${c.pruning?.reason ?? ''}) no longer keeps${retrying(c)}`,
      };
    case 'failed':
      return {
        step: 'Failed',
        message: `${c.failure?.message ?? 'failed'}; tried again at the next run or when the spec changes`,
      };
    case 'late':
      return {
        step: 'Missed',
        message: `missed the run due at ${iso(dueNow(c)?.latest)}: past startingDeadlineSeconds`,
      };
    case 'ending':
      return {
        step: 'Deleting',
        message: 'being deleted: no more snapshots are made; the EtcdSnapshots it made stay',
      };
    default:
      return { step: 'Pending', message: 'waiting for the schedule and its EtcdSnapshots to be observed' };
  }
}
