/**
 * EtcdSnapshot.status from the snapshot machine: the phase, what was stored (location, size,
 * sha256, revision, etcd version), when, and two conditions: Progressing (a step in flight)
 * and Complete (stored and checked, or why not); with spec.verify, Verified (a restore of it
 * matched what was recorded, or what differed). Pure: the caller gives the time and writes it.
 */
import { ConditionReason, ConditionType, setConditions, type ConditionInput } from '../api/conditions.ts';
import type { EtcdSnapshotStatus } from '../api/v1alpha1/index.ts';
import { snapshotJobName } from '../effects/kubernetes/build-snapshot-job.ts';
import { describeSnapshot } from '../machines/describe-snapshot.ts';
import type { SnapshotContext } from '../machines/snapshot-decide.ts';
import { snapshotMachine } from '../machines/snapshot.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';
import type { SnapshotReport } from '../machines/types.ts';

/** What one step (or a refresh) of the snapshot machine gives the status. */
export interface SnapshotStep {
  readonly path: string;
  readonly context: SnapshotContext;
  readonly generation: number;
}

/** What the agent said of the uploads earlier, interrupted runs left: aborted, or why not. */
function tidied(r: SnapshotReport): string {
  const n = r.abortedUploads ?? 0;
  const aborted = n > 0 ? `; ${n} unfinished upload${n === 1 ? '' : 's'} that an earlier attempt left aborted` : '';
  return `${aborted}${r.uploadsNotAborted ? `; ${r.uploadsNotAborted}` : ''}`;
}

const iso = (ms: number | null): string | undefined => (ms === null ? undefined : new Date(ms).toISOString());

/** Verified, for a snapshot that asks for it (spec.verify): none otherwise. */
function verified(c: SnapshotContext): ConditionInput[] {
  const v = c.verification;
  const type = ConditionType.Verified;
  if (v?.verified)
    return [{ type, status: 'True', reason: ConditionReason.Matched, message: `restored and checked: ${v.checked}` }];
  if (v) {
    // A verdict with what was checked differs; a Job that could not check says so (checked: nothing).
    const reason = v.checked === 'nothing' ? ConditionReason.NotChecked : ConditionReason.Differs;
    return [{ type, status: 'False', reason, message: v.differences.join('; ') }];
  }
  if (!c.verify) return [];
  const message = c.result
    ? 'a Job restores the stored snapshot into a throwaway etcd and checks it against what was recorded'
    : 'verified once it is stored';
  return [{ type, status: 'Unknown', reason: ConditionReason.Verifying, message }];
}

/** The status to write, given the status the EtcdSnapshot has now. */
export function snapshotStatus(
  previous: EtcdSnapshotStatus | undefined,
  step: SnapshotStep,
  now: number,
): EtcdSnapshotStatus {
  const c = step.context;
  const { phase, step: reason, message } = describeSnapshot(step.path, c);
  const resting = pathHasTag(snapshotMachine, step.path, TAG.resting);
  const conditions = setConditions(
    previous?.conditions,
    [
      { type: ConditionType.Progressing, status: resting ? 'False' : 'True', reason, message },
      c.result
        ? {
            type: ConditionType.Complete,
            status: 'True',
            reason: 'Succeeded',
            message: `stored and read back whole at ${c.result.location}${tidied(c.result)}`,
          }
        : { type: ConditionType.Complete, status: 'False', reason, message },
      ...verified(c),
    ],
    step.generation,
    new Date(now),
  );
  const r = c.result;
  const startTime = iso(c.startedAt);
  const completionTime = iso(c.completedAt);
  const verifiedTime = c.verification?.verified ? iso(c.verification.at) : undefined;
  return {
    observedGeneration: step.generation,
    phase,
    state: step.path.split('.')[0] ?? 'pending',
    ...(c.member ? { member: c.member } : {}),
    ...(c.jobAsked ? { jobName: snapshotJobName(c.snapshot.name) } : {}),
    ...(startTime ? { startTime } : {}),
    ...(completionTime ? { completionTime } : {}),
    ...(r
      ? { location: r.location, size: r.size, sha256: r.sha256, revision: r.revision, etcdVersion: r.etcdVersion }
      : {}),
    ...(r?.hashKV !== undefined ? { hashKV: r.hashKV, compactRevision: r.compactRevision, keys: r.keys } : {}),
    ...(verifiedTime ? { verifiedTime } : {}),
    conditions,
  };
}
