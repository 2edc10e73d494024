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
import type { KindSpec } from './kind.ts';
import { wakeAt } from './wake.ts';

/** The EtcdSnapshotSchedule kind. */
export const scheduleKind: KindSpec<'EtcdSnapshotSchedule'> = {
  kind: 'EtcdSnapshotSchedule',
  machineName: 'schedule',
  machine: snapshotScheduleMachine,
  watch: WATCHES.schedules,
  // After the snapshots: a schedule's first look sees the snapshots it made.
  wave: 3,
  identify(object) {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const clusterName = object.spec.clusterRef.name;
    const uid = object.metadata.uid ?? '';
    const ref = { uid, kind: 'EtcdSnapshotSchedule' as const, namespace, name, cluster: clusterName };
    // Its handlers act on the schedule's EtcdSnapshots, never on the cluster: no cluster uid to check.
    const cluster = { namespace, name: clusterName, uid: '' };
    return { ref, cluster, input: { schedule: { namespace, name, uid, cluster: clusterName } } };
  },
  status: (current, step, now) =>
    scheduleStatus(current, { path: step.to, context: step.context, generation: step.generation }, now),
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
