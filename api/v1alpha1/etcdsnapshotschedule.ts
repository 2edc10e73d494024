/** EtcdSnapshotSchedule: EtcdSnapshots of an EtcdCluster on a cron schedule, pruned by a retention policy. */
import { CRON_PATTERN, DURATION_PATTERN, TIME_ZONE_PATTERN } from '../../machines/schedule/index.ts';
import { s, type Kind } from '../schema.ts';
import { conditions, observedMachine } from './common.ts';
import { clusterReference, MAX_SNAPSHOT_NAME, snapshotDestination } from './etcdsnapshot.ts';

/**
 * Longest schedule name: each run is an EtcdSnapshot named `<schedule>-<fire time in minutes
 * since 1970>`, eight digits until the year 2160, and that name must fit MAX_SNAPSHOT_NAME.
 */
export const MAX_SCHEDULE_NAME = MAX_SNAPSHOT_NAME - '-12345678'.length;

const retention = s.object(
  'Which of the EtcdSnapshots this schedule made it keeps. The newest successful one is never deleted, so a schedule whose runs keep failing keeps its last good backup however old; nor is the newest one a restore proved (verify).',
  {
    keepLast: s.integer('Keep the newest N successful snapshots.', { minimum: 1, format: 'int32' }),
    maxAge: s.string(
      'Delete successful snapshots completed longer ago than this (except the newest): whole numbers with d, h, m or s, largest first, such as 7d, 12h or 1h30m.',
      { pattern: DURATION_PATTERN, maxLength: 32 },
    ),
  },
  {
    name: 'SnapshotRetention',
    rules: [
      {
        rule: 'has(self.keepLast) || has(self.maxAge)',
        message: 'retention needs keepLast, maxAge or both: a schedule without a limit fills its destination',
      },
    ],
  },
);

const spec = s.object(
  'When to take snapshots of which cluster, where to store them and how many to keep.',
  {
    clusterRef: clusterReference,
    schedule: s.string(
      'When to take a snapshot: a five-field cron expression (minute hour day-of-month month day-of-week) or a macro such as @daily, read in timeZone. See docs/snapshots.md for the syntax.',
      { pattern: CRON_PATTERN, maxLength: 256 },
    ),
    timeZone: s.string('IANA time zone the schedule is read in, such as Europe/Berlin. Left out, UTC.', {
      pattern: TIME_ZONE_PATTERN,
      maxLength: 64,
    }),
    destination: snapshotDestination,
    retention,
    suspend: s.boolean(
      'Freeze the schedule: no new snapshot starts and retention deletes none. A snapshot already running finishes.',
      { default: false },
    ),
    concurrencyPolicy: s.string(
      'Forbid: a run due while the previous snapshot is still running waits for it (and is missed if a later fire time comes first or its startingDeadlineSeconds passes).',
      { enum: ['Forbid'], default: 'Forbid' },
    ),
    startingDeadlineSeconds: s.integer(
      'How late a run may start after its fire time (the manager was down, or the previous snapshot still ran); later, it is counted as missed. Left out, no limit.',
      { minimum: 0, format: 'int64' },
    ),
    failedHistoryLimit: s.integer('How many failed EtcdSnapshots to keep, newest first, to read why they failed.', {
      minimum: 0,
      default: 1,
      format: 'int32',
    }),
    deletionPolicy: s.string(
      'The deletionPolicy of the EtcdSnapshots it creates: Delete removes the stored snapshot with the EtcdSnapshot (retention then frees space), Retain keeps it.',
      { enum: ['Delete', 'Retain'], default: 'Delete' },
    ),
    verify: s.object(
      'Prove the backups by restoring them: the EtcdSnapshots it creates get spec.verify on every Nth run. Left out, none is verified.',
      {
        every: s.integer(
          'Verify the snapshot of every Nth run: 1 verifies each, 24 one a day of an hourly schedule. The first run is verified.',
          { minimum: 1, maximum: 10000, default: 1, format: 'int32' },
        ),
      },
      { name: 'SnapshotVerification' },
    ),
  },
  { name: 'EtcdSnapshotScheduleSpec', required: ['clusterRef', 'schedule', 'destination', 'retention'] },
);

const status = s.object(
  'Where the schedule stands: its runs, its backups and the next fire time.',
  {
    observedGeneration: s.integer('metadata.generation the operator last acted on.', { format: 'int64' }),
    state: s.string("The schedule machine's state."),
    lastScheduleTime: s.string('Fire time of the last run started.', { format: 'date-time' }),
    lastSuccessfulTime: s.string('When the newest successful EtcdSnapshot of this schedule was stored and checked.', {
      format: 'date-time',
    }),
    nextScheduleTime: s.string('The next fire time; absent while suspended or invalid.', { format: 'date-time' }),
    active: s.string('The EtcdSnapshot of this schedule that is running now, if any.'),
    lastSnapshot: s.string('The EtcdSnapshot the last run created.'),
    lastVerifiedTime: s.string(
      'When the newest EtcdSnapshot of this schedule that a restore proved (Verified True) was taken.',
      { format: 'date-time' },
    ),
    missedRuns: s.integer(
      'Fire times that never ran (the manager was down, the previous snapshot still ran past the starting deadline), since the schedule was created.',
      { format: 'int64' },
    ),
    conditions,
    observed: observedMachine,
  },
  { name: 'EtcdSnapshotScheduleStatus' },
);

/** The EtcdSnapshotSchedule kind. */
export const etcdSnapshotSchedule: Kind = {
  kind: 'EtcdSnapshotSchedule',
  plural: 'etcdsnapshotschedules',
  singular: 'etcdsnapshotschedule',
  shortNames: ['etcdsched'],
  categories: ['etcd-operator'],
  description:
    'EtcdSnapshots of an EtcdCluster on a cron schedule, one at a time, pruned by a retention policy. Deleting the schedule leaves the EtcdSnapshots it made (and what they stored) in place.',
  spec,
  status,
  rules: [
    {
      rule: `self.metadata.name.size() <= ${MAX_SCHEDULE_NAME}`,
      message: `metadata.name must be at most ${MAX_SCHEDULE_NAME} characters, so that the EtcdSnapshots named after it (<name>-<minutes since 1970>) stay valid`,
    },
  ],
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterRef.name', description: 'EtcdCluster' },
    { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule', description: 'Cron expression' },
    { name: 'Suspend', type: 'boolean', jsonPath: '.spec.suspend', description: 'No new runs' },
    {
      name: 'Last Success',
      type: 'date',
      jsonPath: '.status.lastSuccessfulTime',
      description: 'Age of the newest good backup',
    },
    { name: 'Next', type: 'string', jsonPath: '.status.nextScheduleTime', description: 'Next fire time' },
    { name: 'Active', type: 'string', jsonPath: '.status.active', description: 'Snapshot running now' },
    {
      name: 'Last Snapshot',
      type: 'string',
      jsonPath: '.status.lastSnapshot',
      description: 'Made by the last run',
      priority: 1,
    },
    { name: 'Missed', type: 'integer', jsonPath: '.status.missedRuns', description: 'Runs missed', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'Age' },
  ],
};
