/**
 * EtcdSnapshotSchedule.status from the schedule machine: its runs (last, next, active, missed),
 * the age of its newest good backup, and two conditions: Progressing (a step in flight) and
 * BackupHealthy (the newest finished snapshot succeeded, or why the backups are not good; with
 * spec.verify, also whether the newest one a restore checked was proved, and when the last proved one was taken).
 * Pure: the caller gives the time and writes it.
 */
import { ConditionReason, ConditionType, setConditions, type ConditionInput } from '../api/conditions.ts';
import type { EtcdSnapshotScheduleStatus } from '../api/v1alpha1/index.ts';
import { describeSchedule } from '../machines/describe-snapshot-schedule.ts';
import type { OwnedSnapshot } from '../machines/schedule/index.ts';
import { activeSnapshot, nextScheduleTime, type ScheduleContext } from '../machines/snapshot-schedule-decide.ts';
import { snapshotScheduleMachine } from '../machines/snapshot-schedule.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';

/** What one step (or a refresh) of the schedule machine gives the status. */
export interface ScheduleStep {
  readonly path: string;
  readonly context: ScheduleContext;
  readonly generation: number;
}

const iso = (ms: number | null | undefined): string | undefined =>
  ms == null ? undefined : new Date(ms).toISOString();
const finishedAt = (s: OwnedSnapshot): number => s.completedAt ?? s.createdAt;

/** Whether the backups are good: the newest finished snapshot decides, unless the schedule cannot run. */
function backupHealth(c: ScheduleContext, step: string, message: string): ConditionInput {
  const type = ConditionType.BackupHealthy;
  if (step === 'InvalidSpec' || step === 'Failed')
    return { type, status: 'False', reason: step === 'Failed' ? ConditionReason.StepFailed : step, message };
  const finished = (c.snapshots ?? []).filter((s) => s.phase === 'Succeeded' || s.phase === 'Failed');
  const newest = [...finished].sort((a, b) => finishedAt(b) - finishedAt(a))[0];
  if (!newest)
    return { type, status: 'False', reason: ConditionReason.NoSnapshotYet, message: 'no snapshot has finished yet' };
  if (newest.phase === 'Succeeded')
    return {
      type,
      status: 'True',
      reason: ConditionReason.SnapshotSucceeded,
      message: `EtcdSnapshot ${newest.name} succeeded at ${iso(finishedAt(newest)) ?? ''}`,
    };
  return {
    type,
    status: 'False',
    reason: ConditionReason.SnapshotFailed,
    message: `EtcdSnapshot ${newest.name} failed: see its conditions`,
  };
}

/** The newest snapshot a restore checked, whether it was proved or not (by when it was checked). */
function lastChecked(c: ScheduleContext): OwnedSnapshot | undefined {
  const checked = (c.snapshots ?? []).filter((s) => s.verified);
  return [...checked].sort((a, b) => (b.verified?.at ?? 0) - (a.verified?.at ?? 0))[0];
}

/** The newest snapshot a restore proved: when it was taken (stored) is what a user can restore to. */
function lastVerified(c: ScheduleContext): OwnedSnapshot | undefined {
  const proved = (c.snapshots ?? []).filter((s) => s.verified?.ok && s.phase === 'Succeeded');
  return [...proved].sort((a, b) => finishedAt(b) - finishedAt(a))[0];
}

/**
 * BackupHealthy with spec.verify: a backup a restore did not prove is not healthy, however many
 * were stored since; a healthy one says when the last proved one was taken.
 */
function withVerification(c: ScheduleContext, health: ConditionInput): ConditionInput {
  if (c.spec?.verifyEvery == null || health.status !== 'True') return health;
  const checked = lastChecked(c);
  if (checked && !checked.verified?.ok)
    return {
      type: health.type,
      status: 'False',
      reason: ConditionReason.VerificationFailed,
      message: `EtcdSnapshot ${checked.name} did not restore as recorded: see its Verified condition`,
    };
  const proved = lastVerified(c);
  const last = proved
    ? `; the last verified by a restore, EtcdSnapshot ${proved.name}, was taken at ${iso(finishedAt(proved)) ?? ''}`
    : '; none verified by a restore yet';
  return { ...health, message: `${health.message}${last}` };
}

/** The status to write, given the status the EtcdSnapshotSchedule has now. */
export function scheduleStatus(
  previous: EtcdSnapshotScheduleStatus | undefined,
  step: ScheduleStep,
  now: number,
): EtcdSnapshotScheduleStatus {
  const c = step.context;
  const { step: reason, message } = describeSchedule(step.path, c);
  const resting = pathHasTag(snapshotScheduleMachine, step.path, TAG.resting);
  const conditions = setConditions(
    previous?.conditions,
    [
      { type: ConditionType.Progressing, status: resting ? 'False' : 'True', reason, message },
      withVerification(c, backupHealth(c, reason, message)),
    ],
    step.generation,
    new Date(now),
  );
  const succeeded = (c.snapshots ?? []).filter((s) => s.phase === 'Succeeded').map(finishedAt);
  const lastSuccessfulTime = iso(succeeded.length > 0 ? Math.max(...succeeded) : null);
  const lastScheduleTime = iso(c.lastScheduleTime);
  const nextTime = iso(nextScheduleTime(c));
  const active = activeSnapshot(c)?.name;
  const proved = lastVerified(c);
  const lastVerifiedTime = iso(proved ? finishedAt(proved) : null);
  return {
    observedGeneration: step.generation,
    state: step.path.split('.')[0] ?? 'pending',
    ...(lastScheduleTime ? { lastScheduleTime } : {}),
    ...(lastSuccessfulTime ? { lastSuccessfulTime } : {}),
    ...(nextTime ? { nextScheduleTime: nextTime } : {}),
    ...(active ? { active } : {}),
    ...(c.lastSnapshot ? { lastSnapshot: c.lastSnapshot } : {}),
    ...(lastVerifiedTime ? { lastVerifiedTime } : {}),
    missedRuns: c.missedRuns,
    conditions,
  };
}
