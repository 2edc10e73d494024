/**
 * Turns what the watches see into the schedule machine's events: the EtcdSnapshotSchedule's
 * spec, and the EtcdSnapshots it made (by the uid label), not those being deleted. Level-based
 * and pure, like observe.ts: the caller stamps the time.
 */
import { ConditionType } from '../api/conditions.ts';
import type { EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';
import { madeBy } from '../effects/kubernetes/build-scheduled-snapshot.ts';
import type { OwnedSnapshot, SnapshotPhase } from '../machines/schedule/index.ts';
import type { ScheduleEvent } from '../machines/types.ts';

const ms = (t: Date | string | undefined): number => (t === undefined ? 0 : new Date(t).getTime());

/** The schedule machine's view of its EtcdSnapshotSchedule. */
export function scheduleObserved(s: EtcdSnapshotSchedule, at: number): ScheduleEvent {
  const { spec } = s;
  return {
    type: 'k8s.schedule.updated',
    at,
    deleting: Boolean(s.metadata.deletionTimestamp),
    spec: {
      generation: s.metadata.generation ?? 0,
      schedule: spec.schedule,
      timeZone: spec.timeZone ?? null,
      suspend: spec.suspend ?? false,
      startingDeadlineSeconds: spec.startingDeadlineSeconds ?? null,
      keepLast: spec.retention.keepLast ?? null,
      maxAge: spec.retention.maxAge ?? null,
      failedHistoryLimit: spec.failedHistoryLimit ?? 1,
      createdAt: ms(s.metadata.creationTimestamp),
      verifyEvery: spec.verify ? (spec.verify.every ?? 1) : null,
    },
  };
}

/** An EtcdSnapshot's phase as retention reads it: one not written yet is Pending. */
const phaseOf = (s: EtcdSnapshot): SnapshotPhase => {
  const p = s.status?.phase;
  return p === 'Running' || p === 'Succeeded' || p === 'Failed' ? p : 'Pending';
};

/** What a restore proved of a snapshot: its Verified condition once True or False, and since when. */
function verifiedOf(s: EtcdSnapshot): Pick<OwnedSnapshot, 'verified'> {
  const v = s.status?.conditions?.find((c) => c.type === ConditionType.Verified);
  if (!v || v.status === 'Unknown') return {};
  const at = ms(v.status === 'True' ? s.status?.verifiedTime : v.lastTransitionTime);
  return { verified: { ok: v.status === 'True', at } };
}

/** The schedule's own EtcdSnapshots that are not being deleted, by name (so an unchanged list is equal). */
export function ownedSnapshots(schedule: EtcdSnapshotSchedule, snapshots: readonly EtcdSnapshot[]): OwnedSnapshot[] {
  const uid = schedule.metadata.uid ?? '';
  return snapshots
    .filter((s) => s.metadata.namespace === schedule.metadata.namespace && madeBy(s, uid))
    .filter((s) => !s.metadata.deletionTimestamp)
    .map((s) => ({
      name: s.metadata.name ?? '',
      phase: phaseOf(s),
      createdAt: ms(s.metadata.creationTimestamp),
      completedAt: s.status?.completionTime ? ms(s.status.completionTime) : null,
      ...verifiedOf(s),
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The schedule machine's view of its EtcdSnapshots. */
export const scheduledSnapshotsListed = (
  schedule: EtcdSnapshotSchedule,
  snapshots: readonly EtcdSnapshot[],
  at: number,
): ScheduleEvent => ({ type: 'k8s.snapshots.listed', at, snapshots: ownedSnapshots(schedule, snapshots) });
