/**
 * Why a member's Pod or claim is stuck, in Kubernetes' own words: the scheduler's PodScheduled
 * message, a container waiting on its image or in a crash loop (with its last termination
 * message), a claim still Pending (with its newest Warning Event). A member that waits for its
 * Pod then says what it waits on, instead of looking like any member starting. Pure.
 */
import type { V1ContainerStatus, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { ConditionReason } from '../api/conditions.ts';
import { RESTORE_CONTAINERS } from '../effects/kubernetes/build-restore.ts';
import type { Trouble } from '../machines/types.ts';
import { SNAPSHOT_UNREADABLE_EXIT_CODE } from './agent.ts';

/** Container waiting reasons that do not pass by themselves: the image, its config, a crash loop. */
const STUCK_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'CreateContainerError',
  'RunContainerError',
]);

/** The last non-empty line of a termination message (a log tail), shortened to what reads in a condition. */
function lastLine(message: string | undefined): string | undefined {
  const line = (message ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  return line && line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

function containerTrouble(s: V1ContainerStatus, init: boolean): Trouble | undefined {
  const waiting = s.state?.waiting;
  if (!waiting?.reason || !STUCK_WAITING.has(waiting.reason)) return undefined;
  const last = s.lastState?.terminated;
  const exit = last
    ? `; last exit code ${last.exitCode}${lastLine(last.message) ? `: ${lastLine(last.message)}` : ''}`
    : '';
  const what = `${init ? 'init container' : 'container'} ${s.name}`;
  return {
    reason: waiting.reason,
    message: `${what} ${waiting.reason}${waiting.message ? `: ${waiting.message}` : ''}${exit}`,
  };
}

/**
 * The restore's fetch found the snapshot it restores missing or not what was stored (its exit
 * code says so): no restart of it fixes that, so it is said at once, not as a crash loop.
 */
function unreadableSnapshot(s: V1ContainerStatus): Trouble | undefined {
  const ended = [s.state?.terminated, s.lastState?.terminated].find(
    (t) => t?.exitCode === SNAPSHOT_UNREADABLE_EXIT_CODE,
  );
  if (s.name !== RESTORE_CONTAINERS[0] || !ended) return undefined;
  return {
    reason: ConditionReason.SnapshotUnreadable,
    message: `init container ${s.name} cannot read the snapshot to restore: ${lastLine(ended.message) ?? `exit code ${ended.exitCode}`}`,
  };
}

/** What keeps the Pod from running, if anything does. */
export function podTrouble(pod: V1Pod): Trouble | undefined {
  if (pod.metadata?.deletionTimestamp) return undefined;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False')
    return {
      reason: scheduled.reason ?? 'Unschedulable',
      message: `Pod ${pod.metadata?.name ?? ''} not scheduled: ${scheduled.message ?? scheduled.reason ?? 'no reason given'}`,
    };
  const init = (pod.status?.initContainerStatuses ?? []).map((s) => unreadableSnapshot(s) ?? containerTrouble(s, true));
  const main = (pod.status?.containerStatuses ?? []).map((s) => containerTrouble(s, false));
  return [...init, ...main].find((t) => t !== undefined);
}

/**
 * Why the claim is not bound yet, if it is Pending: with `warning`, the newest Warning Event on it
 * (manager/claim-warnings.ts), which says why; without, where to look.
 */
export function claimTrouble(pvc: V1PersistentVolumeClaim, warning?: Trouble): Trouble | undefined {
  if (pvc.status?.phase !== 'Pending') return undefined;
  const klass = pvc.spec?.storageClassName;
  const pending = `PersistentVolumeClaim ${pvc.metadata?.name ?? ''} is Pending`;
  return {
    reason: 'ClaimPending',
    message: warning
      ? `${pending}${klass ? ` (StorageClass ${klass})` : ''}: ${warning.reason}: ${lastLine(warning.message) ?? ''}`
      : `${pending}${klass ? ` (StorageClass ${klass}; kubectl describe pvc says why)` : ''}`,
  };
}
