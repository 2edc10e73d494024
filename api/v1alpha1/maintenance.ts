/** EtcdCluster spec.maintenance: what the operator does on its own to keep etcd's database small. */
import { CRON_PATTERN, TIME_ZONE_PATTERN } from '../../machines/schedule/index.ts';
import { s } from '../schema.ts';

/** spec.maintenance.defrag: when the operator defragments every member. */
export const defrag = s.object(
  "Defragmentation: each member's database rebuilt, giving back to the file system the space that compaction and deletes freed (etcd keeps it allocated otherwise). One member at a time, followers first, the leader last once leadership moved off it, each answering again before the next, and only while every voter is healthy: etcd blocks a member's reads and writes while it is rebuilt. Set a schedule, a threshold, or both.",
  {
    schedule: s.string(
      'When to defragment every member: a five-field cron expression (minute hour day-of-month month day-of-week) or a macro such as @daily, read in timeZone, as EtcdSnapshotSchedule reads it. A run due while a voter is unhealthy starts once all are.',
      { pattern: CRON_PATTERN, maxLength: 256 },
    ),
    timeZone: s.string('IANA time zone the schedule is read in, such as Europe/Berlin. Left out, UTC.', {
      pattern: TIME_ZONE_PATTERN,
      maxLength: 64,
    }),
    threshold: s.object(
      "Defragment the members whose database is this fragmented (allocated but holding no data: etcd's dbSize - dbSizeInUse), looked at every health probe. With both fields set, a member must pass both. Less than 1Mi never counts, and a run for the threshold starts no sooner than 5 minutes after the last run ended.",
      {
        fragmentedBytes: s.quantity('Fragmented bytes, such as 64Mi.', {
          rules: [
            {
              rule: "!isQuantity(string(self)) || quantity(string(self)).isGreaterThan(quantity('0'))",
              message: 'maintenance.defrag.threshold.fragmentedBytes must be above 0',
            },
          ],
        }),
        fragmentedPercent: s.integer('Fragmented share of the database, in percent.', { minimum: 1, maximum: 100 }),
      },
      {
        name: 'DefragThreshold',
        rules: [
          {
            rule: 'has(self.fragmentedBytes) || has(self.fragmentedPercent)',
            message: 'maintenance.defrag.threshold needs fragmentedBytes, fragmentedPercent or both',
          },
        ],
      },
    ),
  },
  {
    name: 'Defragmentation',
    rules: [
      {
        rule: 'has(self.schedule) || has(self.threshold)',
        message: 'maintenance.defrag needs a schedule, a threshold or both',
      },
      {
        rule: '!has(self.timeZone) || has(self.schedule)',
        message: 'maintenance.defrag.timeZone is only read with a schedule',
        fieldPath: '.timeZone',
      },
    ],
  },
);
