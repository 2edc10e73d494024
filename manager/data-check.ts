/**
 * Reads the check-data init container's verdict off a member's Pod: exit code 3 means etcd had
 * run on the volume and its data is gone, which the member machine answers by replacing the
 * member (`member.data.lost`) instead of starting it empty. Pure: the caller stamps the time.
 */
import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import { CHECK_DATA_CONTAINER } from '../effects/kubernetes/build-pod.ts';
import type { MemberEvent } from '../machines/types.ts';
import { DATA_LOST_EXIT_CODE } from './agent.ts';

/** The reason given when the check failed but left no termination message. */
export const DATA_LOST_REASON =
  "the check-data init container found no etcd data on the member's volume, though etcd ran on it before";

/** The message's line that tells (a log tail from FallbackToLogsOnError may hold more lines). */
function reasonOf(term: V1ContainerStateTerminated): string {
  const lines = (term.message ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => l.startsWith('etcd data lost')) ?? lines.at(-1) ?? DATA_LOST_REASON;
}

/** `member.data.lost` when the Pod's check-data init container ended (now or last run) with exit code 3. */
export function dataLostObserved(pod: V1Pod | undefined, at: number): MemberEvent | null {
  const status = pod?.status?.initContainerStatuses?.find((s) => s.name === CHECK_DATA_CONTAINER);
  const term = [status?.state?.terminated, status?.lastState?.terminated].find(
    (t) => t?.exitCode === DATA_LOST_EXIT_CODE,
  );
  return term ? { type: 'member.data.lost', at, reason: reasonOf(term) } : null;
}
