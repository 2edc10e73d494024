/**
 * Turns what the watches see into the snapshot machine's events: the EtcdSnapshot, its
 * cluster (with the members a snapshot may be taken from), and its two Jobs with the agent's
 * report from their Pods. Level-based and pure, like observe.ts: the caller stamps the time.
 */
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdSnapshot } from '../api/v1alpha1/index.ts';
import { AGENT_CONTAINER, storedAt } from '../effects/kubernetes/build-snapshot-job.ts';
import { holdersOf, SNAPSHOT_FINALIZER } from '../effects/kubernetes/meta.ts';
import type {
  EtcdObservation,
  JobObservation,
  SnapshotClusterObservation,
  SnapshotEvent,
  SnapshotReport,
  SnapshotVerdict,
} from '../machines/types.ts';

/**
 * The snapshot machine's view of its EtcdSnapshot; `restoring(cluster)` says whether an EtcdCluster
 * whose hold is on it exists and is not being deleted (a hold of any other restores nothing).
 */
export function snapshotObserved(
  s: EtcdSnapshot,
  at: number,
  restoring: (cluster: string) => boolean = () => true,
): SnapshotEvent {
  const holders = holdersOf(s.metadata.finalizers);
  return {
    type: 'k8s.snapshot.updated',
    at,
    deleting: Boolean(s.metadata.deletionTimestamp),
    retain: s.spec.deletionPolicy === 'Retain',
    finalizer: (s.metadata.finalizers ?? []).includes(SNAPSHOT_FINALIZER),
    verify: s.spec.verify === true,
    heldBy: holders.filter(restoring),
    staleHolds: holders.filter((h) => !restoring(h)),
  };
}

/**
 * The members a snapshot may be taken from: the healthy voters etcd lists, when a leader is
 * among them; followers first, so the leader keeps serving writes undisturbed.
 */
export function candidates(probe: EtcdObservation | null): string[] {
  if (!probe) return [];
  const leader = probe.leader ?? null;
  if (leader === null || !probe.healthy.includes(leader)) return [];
  const voters = probe.members.filter((m) => !m.learner && m.name !== '' && probe.healthy.includes(m.id));
  return [...voters.filter((m) => m.id !== leader), ...voters.filter((m) => m.id === leader)].map((m) => m.name);
}

/**
 * The snapshot machine's view of the cluster: `probe` is the manager's last etcd probe of it
 * (null: no member answered; undefined: not probed since the manager started).
 */
export function snapshotClusterObserved(
  cluster: EtcdCluster | undefined,
  probe: EtcdObservation | null | undefined,
  at: number,
): SnapshotEvent {
  const observed: SnapshotClusterObservation = cluster
    ? {
        exists: true,
        deleting: Boolean(cluster.metadata.deletionTimestamp),
        dormant: cluster.spec.replicas === 0,
        candidates: probe === undefined ? null : candidates(probe),
      }
    : { exists: false, deleting: false, dormant: false, candidates: null };
  return { type: 'k8s.cluster.observed', at, cluster: observed };
}

/** The agent container's termination message in a Pod that ran it, if it ended. */
function terminated(pod: V1Pod): { exitCode: number; message: string } | undefined {
  const state = pod.status?.containerStatuses?.find((c) => c.name === AGENT_CONTAINER)?.state?.terminated;
  return state ? { exitCode: state.exitCode, message: (state.message ?? '').trim() } : undefined;
}

/** Why a Pod failed: its agent's message, else that of the first init container that failed (a verify Job's). */
function failedWith(pod: V1Pod): { exitCode: number; message: string } | undefined {
  const agent = terminated(pod);
  if (agent && agent.exitCode !== 0) return agent;
  const init = (pod.status?.initContainerStatuses ?? [])
    .map((c) => ({ name: c.name, state: c.state?.terminated ?? c.lastState?.terminated }))
    .find((c) => c.state && c.state.exitCode !== 0);
  if (!init?.state) return agent;
  const message = (init.state.message ?? '').trim() || init.state.reason || 'no message';
  return { exitCode: init.state.exitCode, message: `${init.name}: ${message}` };
}

/** A verify agent's verdict, checked to be the shape it prints; a string says what is wrong with it. */
export function parseVerdict(message: string): SnapshotVerdict | string {
  let v: Partial<Record<keyof SnapshotVerdict, unknown>>;
  try {
    v = JSON.parse(message) as typeof v;
  } catch {
    return `the verify agent's report is not JSON: ${message.slice(0, 200)}`;
  }
  const differences = Array.isArray(v.differences) ? v.differences.filter((d) => typeof d === 'string') : null;
  if (typeof v.verified !== 'boolean' || typeof v.checked !== 'string' || !differences)
    return `the verify agent's report lacks verified, checked or differences: ${message.slice(0, 200)}`;
  return { verified: v.verified && differences.length === 0, checked: v.checked, differences };
}

/** What the agent recorded to verify the snapshot against, when it did (agents before it did not). */
function recorded(
  r: Partial<Record<keyof SnapshotReport, unknown>>,
): Pick<SnapshotReport, 'hashKV' | 'compactRevision' | 'keys'> {
  const { hashKV, compactRevision, keys } = r;
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n);
  return whole(hashKV) && whole(compactRevision) && whole(keys) ? { hashKV, compactRevision, keys } : {};
}

/** The agent's report, checked to be the shape it prints; a string says what is wrong with it. */
export function parseReport(message: string, location: string): SnapshotReport | string {
  let r: Partial<Record<keyof SnapshotReport, unknown>>;
  try {
    r = JSON.parse(message) as typeof r;
  } catch {
    return `the agent's report is not JSON: ${message.slice(0, 200)}`;
  }
  const ok =
    typeof r.size === 'number' &&
    r.size > 0 &&
    typeof r.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(r.sha256) &&
    typeof r.revision === 'number' &&
    typeof r.etcdVersion === 'string';
  if (!ok) return `the agent's report lacks size, sha256, revision or etcdVersion: ${message.slice(0, 200)}`;
  return {
    location,
    size: r.size as number,
    sha256: r.sha256 as string,
    revision: r.revision as number,
    etcdVersion: r.etcdVersion as string,
    ...recorded(r),
    ...(typeof r.abortedUploads === 'number' && r.abortedUploads > 0 ? { abortedUploads: r.abortedUploads } : {}),
    ...(typeof r.uploadsNotAborted === 'string' ? { uploadsNotAborted: r.uploadsNotAborted.slice(0, 300) } : {}),
  };
}

/**
 * One Job of the snapshot, with its Pods: whether it runs, succeeded or failed for good (with
 * the last Pod's message). `snapshot` is given for the Job that takes it: its success counts
 * only with the agent's report of what it stored, read from its Pod once the Pod is seen; with
 * `verifying`, the same holds for a verify Job and its agent's verdict.
 */
export function jobObservation(
  job: V1Job | undefined,
  pods: readonly V1Pod[],
  snapshot?: EtcdSnapshot,
  verifying = false,
): JobObservation | null {
  if (!job) return null;
  const uid = job.metadata?.uid ?? '';
  const created = (p: V1Pod): number => new Date(p.metadata?.creationTimestamp ?? 0).getTime();
  const mine = pods
    .filter((p) => p.metadata?.ownerReferences?.some((o) => o.uid === uid))
    .sort((a, b) => created(a) - created(b));
  const condition = (type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
  const succeeded = Boolean(condition('Complete')) || (job.status?.succeeded ?? 0) > 0;
  const failedCondition = condition('Failed');
  const base = {
    uid,
    active: (job.status?.active ?? 0) > 0,
    deleting: Boolean(job.metadata?.deletionTimestamp),
  };
  if (failedCondition) {
    const last = mine
      .map(failedWith)
      .filter((t) => t !== undefined && t.exitCode !== 0)
      .at(-1);
    const why = last?.message || failedCondition.message || failedCondition.reason || 'no reason given';
    return { ...base, succeeded: false, failed: why };
  }
  if (!succeeded) return { ...base, succeeded: false, failed: null };
  if (!snapshot && !verifying) return { ...base, succeeded: true, failed: null };
  const done = mine.map(terminated).find((t) => t?.exitCode === 0);
  // The Pod's status may reach this cache after the Job's: the report comes with the next look.
  if (!done) return { ...base, succeeded: true, failed: null };
  if (!snapshot) {
    const verdict = parseVerdict(done.message);
    if (typeof verdict === 'string') return { ...base, succeeded: false, failed: verdict };
    return { ...base, succeeded: true, failed: null, verdict };
  }
  const report = parseReport(done.message, storedAt(snapshot).location);
  if (typeof report === 'string') return { ...base, succeeded: false, failed: report };
  return { ...base, succeeded: true, failed: null, report };
}
