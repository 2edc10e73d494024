/**
 * EtcdSnapshot.status from the snapshot machine: the phase, what was stored (location, size,
 * sha256, revision, etcd version), when, and two conditions: Progressing (a step in flight)
 * and Complete (stored and checked, or why not). Pure: the caller gives the time and writes it.
 */
import { ConditionType, setConditions } from '../api/conditions.ts';
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
    ],
    step.generation,
    new Date(now),
  );
  const r = c.result;
  const startTime = iso(c.startedAt);
  const completionTime = iso(c.completedAt);
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
    conditions,
  };
}
