/**
 * The backup metrics, read at scrape time from the informers' caches: the newest successful and
 * failed EtcdSnapshot per cluster and schedule, and each EtcdSnapshotSchedule's interval, state and
 * last success (the backup alert compares them). Labels: namespace, cluster, schedule.
 */
import { ConditionType } from '../api/conditions.ts';
import type { EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';
import { LABEL } from '../effects/kubernetes/meta.ts';
import { nextRun, parseCron } from '../machines/schedule/index.ts';
import { Family, type Labels, type Metric, type ObjectCaches } from './metrics-families.ts';

/** The snapshot and schedule families, reading the caches `caches()` gives when scraped. */
export function backupFamilies(caches: () => ObjectCaches | undefined, now: () => number): Metric[] {
  return [...snapshotFamilies(caches), ...scheduleFamilies(caches, now)];
}

function snapshotFamilies(caches: () => ObjectCaches | undefined): Metric[] {
  /** The newest snapshot per cluster and schedule that `when` gives a time for, with that time and its size. */
  const newestBy = (when: (s: EtcdSnapshot) => string | undefined) => () => {
    const newest = new Map<string, { labels: Labels; at: number; size: number }>();
    for (const s of caches()?.EtcdSnapshot.list() ?? []) {
      const at = seconds(when(s));
      if (at === undefined) continue;
      const labels = snapshotLabels(s);
      const key = JSON.stringify(labels);
      if ((newest.get(key)?.at ?? -1) < at) newest.set(key, { labels, at, size: s.status?.size ?? 0 });
    }
    return [...newest.values()];
  };
  const verified = (s: EtcdSnapshot) => s.status?.conditions?.find((c) => c.type === ConditionType.Verified);
  const ok = newestBy((s) => (s.status?.phase === 'Succeeded' ? s.status.completionTime : undefined));
  const series = (newest: ReturnType<typeof newestBy>, value: 'at' | 'size') => () =>
    newest().map((n) => [n.labels, n[value]] as const);
  return [
    new Family(
      'etcd_operator_snapshot_last_success_timestamp_seconds',
      'When the newest successful EtcdSnapshot was stored and checked, per cluster and schedule ("" for one-shot snapshots).',
      series(ok, 'at'),
    ),
    new Family(
      'etcd_operator_snapshot_last_success_size_bytes',
      'The size of the newest successful EtcdSnapshot, per cluster and schedule.',
      series(ok, 'size'),
    ),
    new Family(
      'etcd_operator_snapshot_last_failure_timestamp_seconds',
      'When the newest failed EtcdSnapshot failed, per cluster and schedule.',
      series(
        newestBy((s) => (s.status?.phase === 'Failed' ? failedAt(s) : undefined)),
        'at',
      ),
    ),
    new Family(
      'etcd_operator_snapshot_last_verified_timestamp_seconds',
      'When the newest EtcdSnapshot a restore proved (Verified True) was stored: the age of the last proven backup, per cluster and schedule.',
      series(
        newestBy((s) => (verified(s)?.status === 'True' ? s.status?.completionTime : undefined)),
        'at',
      ),
    ),
    new Family(
      'etcd_operator_snapshot_last_verify_failure_timestamp_seconds',
      'When a restore of an EtcdSnapshot last failed to prove it (Verified False), per cluster and schedule.',
      series(
        newestBy((s) => (verified(s)?.status === 'False' ? verified(s)?.lastTransitionTime : undefined)),
        'at',
      ),
    ),
  ];
}

function scheduleFamilies(caches: () => ObjectCaches | undefined, now: () => number): Metric[] {
  const schedules = (value: (s: EtcdSnapshotSchedule) => number | undefined) => () =>
    (caches()?.EtcdSnapshotSchedule.list() ?? []).flatMap((s) => {
      const v = value(s);
      return v === undefined ? [] : [[scheduleLabels(s), v] as const];
    });
  return [
    new Family(
      'etcd_operator_schedule_interval_seconds',
      'The time between two fire times of the schedule, the next two from now (absent while its schedule is not valid).',
      schedules((s) => intervalOf(s, now())),
    ),
    new Family(
      'etcd_operator_schedule_suspended',
      'Whether the schedule is suspended (spec.suspend).',
      schedules((s) => Number(s.spec.suspend)),
    ),
    new Family(
      'etcd_operator_schedule_created_timestamp_seconds',
      'When the EtcdSnapshotSchedule was created.',
      schedules((s) => seconds(s.metadata.creationTimestamp)),
    ),
    new Family(
      'etcd_operator_schedule_last_success_timestamp_seconds',
      "When the schedule's newest successful snapshot was stored (status.lastSuccessfulTime).",
      schedules((s) => seconds(s.status?.lastSuccessfulTime)),
    ),
    new Family(
      'etcd_operator_schedule_missed_runs',
      'Fire times that never ran since the schedule was created (status.missedRuns).',
      schedules((s) => s.status?.missedRuns ?? 0),
    ),
  ];
}

const snapshotLabels = (s: EtcdSnapshot): Labels => ({
  namespace: s.metadata.namespace ?? '',
  cluster: s.spec.clusterRef.name,
  schedule: s.metadata.labels?.[LABEL.schedule] ?? '',
});

const scheduleLabels = (s: EtcdSnapshotSchedule): Labels => ({
  namespace: s.metadata.namespace ?? '',
  cluster: s.spec.clusterRef.name,
  schedule: s.metadata.name ?? '',
});

/** A time as seconds since the epoch; undefined when absent or not a time. */
export function seconds(at: string | Date | undefined): number | undefined {
  if (at === undefined) return undefined;
  const ms = at instanceof Date ? at.getTime() : Date.parse(at);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/** When a failed snapshot failed: its Progressing condition's last change, else when it started. */
const failedAt = (s: EtcdSnapshot): string | undefined =>
  s.status?.conditions?.find((c) => c.type === ConditionType.Progressing)?.lastTransitionTime ?? s.status?.startTime;

/** Seconds between the schedule's next two fire times after `now`; undefined when it is not valid. */
function intervalOf(s: EtcdSnapshotSchedule, now: number): number | undefined {
  try {
    const cron = parseCron(s.spec.schedule);
    const zone = s.spec.timeZone ?? 'UTC';
    const first = nextRun(cron, zone, now);
    const second = first === null ? null : nextRun(cron, zone, first);
    return first === null || second === null ? undefined : (second - first) / 1000;
  } catch {
    return undefined;
  }
}
