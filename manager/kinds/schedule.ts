/**
 * EtcdSnapshotSchedule: the schedule machine. Working a key feeds it its spec and the snapshots
 * it made, and wakes it at its next fire time.
 */
import { patchScheduleStatus } from '../../effects/kubernetes/index.ts';
import { describeSchedule } from '../../machines/describe-snapshot-schedule.ts';
import { snapshotScheduleMachine } from '../../machines/snapshot-schedule.ts';
import { nextScheduleTime } from '../../machines/snapshot-schedule-decide.ts';
import { scheduledSnapshotsListed, scheduleObserved } from '../observe-schedule.ts';
import { scheduleStatus } from '../schedule-status.ts';
import { WATCHES } from '../watches.ts';
import { clusterRefIdentity, statusByPath, wakeAt } from './_util.ts';
import type { KindSpec } from './kind.ts';

/** The EtcdSnapshotSchedule kind. */
export const scheduleKind: KindSpec<'EtcdSnapshotSchedule'> = {
  kind: 'EtcdSnapshotSchedule',
  machineName: 'schedule',
  machine: snapshotScheduleMachine,
  watch: WATCHES.schedules,
  // After the snapshots: a schedule's first look sees the snapshots it made.
  wave: 3,
  identify: (object) => clusterRefIdentity('EtcdSnapshotSchedule', 'schedule', object),
  status: statusByPath(scheduleStatus),
  patch: patchScheduleStatus,
  describe: describeSchedule,
  async work(key, object, w) {
    const entry = await w.entry(scheduleKind, key, object);
    const moved = await w.step(entry, async () => {
      const at = w.now();
      await entry.runner.feed(scheduleObserved(object, at));
      await entry.runner.feed(scheduledSnapshotsListed(object, w.caches.EtcdSnapshot.list(), at));
    });
    // Woken at the next fire time; a far one is looked at again within the hour.
    wakeAt(w, key, nextScheduleTime(entry.runner.snapshot.context));
    if (moved) w.queue.add(key);
  },
};
