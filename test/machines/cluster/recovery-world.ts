/** The world of the recovery tests: a 3-member cluster demo, its members and etcd as the machine observes them. */
import { clusterMachine } from '../../../machines/cluster.ts';
import { describeCluster } from '../../../machines/describe.ts';
import { peerURL } from '../../../machines/policy.ts';
import type { ClusterEvent, EtcdObservation, MemberObservation, RecoveryRequest } from '../../../machines/types.ts';
import { Driver, play, voters } from '../harness.ts';

/** The cluster under test. */
export const ref = { namespace: 'default', name: 'demo', uid: 'uid-1' };
/** demo-n's etcd member ID. */
export const id = (n: number): string => `a${n}`;

/** The test clock: reset before each test, 10 ms a step. */
export const time = { clock: 0 };
/** Resets the clock (call in beforeEach). */
export const resetClock = (): void => {
  time.clock = Date.UTC(2026, 10, 27, 12);
};
const now = (): number => (time.clock += 10);
/** The effect `kind` succeeded now, with its result. */
export const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: now(), result }) as ClusterEvent;

/** The spec observed now, with a recovery request if given. */
export const spec = (recovery?: RecoveryRequest, replicas = 3): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: now(),
  spec: { replicas, version: '3.6.16' },
  progressDeadlineSeconds: 600,
  ...(recovery ? { recovery } : {}),
});
/** A recovery from the survivor asked now. */
export const ask = (requestID: string, member?: string, replicas = 3): ClusterEvent =>
  spec({ requestID, from: 'survivor', ...(member ? { member } : {}) }, replicas);

/** demo-0..2 as listed, each with a plain Pod unless `o` says otherwise. */
export const members = (o: Record<number, Partial<MemberObservation> | null> = {}, n = 3): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: now(),
  members: voters(Array<string>(n).fill('3.6.16')).flatMap((m, i) =>
    o[i] === null ? [] : [{ ...m, pod: { forceNewCluster: '' }, ...o[i] }],
  ),
});

/** etcd listing `listed` members, `healthy` answering; without a leader each reports [applied, revision]. */
export function etcd(listed: number[], healthy: number[], progress?: Record<number, [number, number]>): ClusterEvent {
  const observation: EtcdObservation = {
    clusterID: 'c1',
    members: listed.map((i) => ({ id: id(i), name: `demo-${i}`, peerURL: peerURL(ref, `demo-${i}`), learner: false })),
    healthy: healthy.map(id),
    leader: progress ? null : id(healthy[0] ?? 0),
    ...(progress
      ? {
          progress: Object.fromEntries(
            Object.entries(progress).map(([i, [applied, revision]]) => [id(Number(i)), { applied, revision }]),
          ),
        }
      : {}),
  };
  return { type: 'etcd.members.listed', at: now(), etcd: observation };
}

/** demo-1 and demo-2 as the recovery leaves them: data gone, made dormant, no Pod. */
export const lost = {
  1: { state: 'replacing' as const, pod: undefined, dormant: true },
  2: { state: 'replacing' as const, pod: undefined, dormant: true },
};

/** What describe says of the cluster now. */
export const say = (d: Driver<typeof clusterMachine>): string => describeCluster(d.state, d.context).message;

/** A 3-member cluster adopted steady, its quorum healthy. */
export function steady(): Driver<typeof clusterMachine> {
  const d = new Driver(clusterMachine, { cluster: ref });
  play(d, [
    [spec(), 'pending'],
    [members(), 'observing'],
    [etcd([0, 1, 2], [0, 1, 2]), 'updatingBudget.running'],
    [ok('setDisruptionBudget', { minAvailable: 2 }), 'steady'],
  ]);
  return d;
}

/** A 3-member cluster adopted steady, then demo-1 and demo-2 lost (their Pods stopped): quorum lost. */
export function quorumLost(): Driver<typeof clusterMachine> {
  const d = steady();
  play(d, [
    [etcd([0, 1, 2], [0], { 0: [120, 57] }), 'degraded', []],
    [members({ 1: { state: 'replacing', pod: undefined }, 2: { state: 'replacing', pod: undefined } }), 'degraded'],
  ]);
  return d;
}
