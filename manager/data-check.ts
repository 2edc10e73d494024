/**
 * Reads the check-data init container's verdict off a member's Pod: exit code 3 means etcd had
 * run on the volume and its data is gone, which the member machine answers by replacing the
 * member (`member.data.lost`) instead of starting it empty. etcd's own container says the same
 * when it dies because its raft log is behind what the cluster committed to it (started anew on
 * an emptied volume, in the same Pod, where check-data does not run): that is data loss too, not
 * a restart. Pure: the caller stamps the time.
 */
import type { V1ContainerStateTerminated, V1Pod } from '@kubernetes/client-node';
import { CHECK_DATA_CONTAINER, ETCD_CONTAINER } from '../effects/kubernetes/build-pod.ts';
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

/** raft's panic when the leader commits past the end of this member's log: the log was lost. */
const RAFT_LOG_BEHIND = /tocommit\((\d+)\) is out of range \[lastIndex\((\d+)\)\]/;

/** The reason etcd's container gives, in its last termination's log tail, when its raft log was lost. */
function raftLogLost(pod: V1Pod | undefined): string | null {
  const status = pod?.status?.containerStatuses?.find((s) => s.name === ETCD_CONTAINER);
  for (const t of [status?.state?.terminated, status?.lastState?.terminated]) {
    const m = t?.message?.match(RAFT_LOG_BEHIND);
    if (m)
      return (
        `etcd data lost: etcd exited because its raft log ends at index ${m[2]} while the cluster committed ` +
        `up to ${m[1]} to it (${m[0]}): its volume was emptied under it; the operator replaces it with a new member while quorum holds`
      );
  }
  return null;
}

/**
 * `member.data.lost` when the Pod's check-data init container ended (now or last run) with exit
 * code 3, or its etcd container ended saying its raft log is behind the cluster's.
 */
export function dataLostObserved(pod: V1Pod | undefined, at: number): MemberEvent | null {
  const status = pod?.status?.initContainerStatuses?.find((s) => s.name === CHECK_DATA_CONTAINER);
  const term = [status?.state?.terminated, status?.lastState?.terminated].find(
    (t) => t?.exitCode === DATA_LOST_EXIT_CODE,
  );
  if (term) return { type: 'member.data.lost', at, reason: reasonOf(term) };
  const behind = raftLogLost(pod);
  return behind ? { type: 'member.data.lost', at, reason: behind } : null;
}
