/** Drives the cluster machine as the runtime does, writing its status after every step. */
import { expect } from 'vitest';
import type { EtcdClusterStatus } from '../../api/v1alpha1/index.ts';
import { clusterMachine } from '../../machines/cluster.ts';
import { peerURL } from '../../machines/policy.ts';
import type { MemberState } from '../../machines/member-state.ts';
import type { ClusterEvent } from '../../machines/types.ts';
import { clusterStatus } from '../../manager/status.ts';
import { Driver } from '../machines/harness.ts';

export const ref = { namespace: 'default', name: 'demo', uid: 'u1' };
let clock = Date.parse('2026-11-21T12:00:00Z');
export const at = (): number => (clock += 1000);
/** A probe `ms` later that finds nothing new. */
export const tick = (ms: number): ClusterEvent => ({ type: 'timer.tick', at: (clock += ms) });
const range = (n: number): number[] => [...Array(n).keys()];

/** etcd's list: `voters` started voters, then an optional learner (started or not); `down` not healthy. */
export const listed = (
  voters: number,
  learner?: { n: number; started: boolean },
  down: number[] = [],
): ClusterEvent => {
  const members = range(voters).map((n) => ({ id: `a${n}`, name: `demo-${n}`, peerURL: peerURL(ref, `demo-${n}`) }));
  const all = [
    ...members.map((m) => ({ ...m, learner: false })),
    ...(learner
      ? [
          {
            id: `a${learner.n}`,
            name: learner.started ? `demo-${learner.n}` : '',
            peerURL: peerURL(ref, `demo-${learner.n}`),
            learner: true,
          },
        ]
      : []),
  ];
  const healthy = all.filter((m) => m.name !== '' && !down.some((n) => m.id === `a${n}`)).map((m) => m.id);
  return { type: 'etcd.members.listed', at: at(), etcd: { clusterID: 'c1', members: all, healthy } };
};
/** The EtcdMembers there are, each `demo-<n>` in its state (demo-0 the seed). */
export const membersIn = (list: readonly (readonly [number, MemberState])[]): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: at(),
  members: list.map(([n, state]) => ({
    name: `demo-${n}`,
    ordinal: n,
    bootstrap: n === 0,
    dormant: false,
    state,
    deleting: false,
  })),
});
export const memberList = (n: number): ClusterEvent => membersIn(range(n).map((i) => [i, 'voter'] as const));
export const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: at(), result }) as ClusterEvent;
export const spec = (replicas: number): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: at(),
  spec: { replicas, version: '3.6.16' },
  progressDeadlineSeconds: 600,
});

/** Feeds events, writing the status after each step as the runtime does, and records every status. */
export class Recorder {
  readonly d = new Driver(clusterMachine, { cluster: ref });
  status: EtcdClusterStatus | undefined;
  readonly seen: { state: string; status: EtcdClusterStatus }[] = [];
  /** metadata.generation the status is written for. */
  generation = 1;
  #seq = 0;

  /** The sequence number of the last step recorded. */
  get seq(): number {
    return this.#seq;
  }

  send(...events: ClusterEvent[]): void {
    for (const e of events) {
      const from = this.d.state;
      this.d.send(e);
      this.status = clusterStatus(
        this.status,
        { seq: ++this.#seq, from, to: this.d.state, context: this.d.context, generation: this.generation },
        e.at,
      );
      this.seen.push({ state: this.d.state, status: this.status });
    }
  }

  /** Joins member n into a cluster of n voters, up to its promotion and etcd's next list. */
  join(n: number): void {
    this.send(
      listed(n),
      ok('addLearner', { memberID: `a${n}`, initialCluster: '' }),
      ok('createMember'),
      listed(n, { n, started: true }),
      ok('promoteLearner'),
    );
  }
}

export const condition = (s: EtcdClusterStatus | undefined, type: string) =>
  s?.conditions?.find((c) => c.type === type);
/** Every recorded status in which `type` claimed True. */
export const claims = (r: Recorder, type: string) => r.seen.filter((x) => condition(x.status, type)?.status === 'True');

/** A new cluster of `replicas`, steady: every member created at once (one member: its seed), then etcd's answer. */
export function bootstrap(replicas: number): Recorder {
  const r = new Recorder();
  r.send(memberList(0), spec(replicas), ok('ensureServices'));
  for (let n = 0; n < replicas; n++) r.send(ok('createMember'));
  // The start ends on etcd's answer with a leader among its members.
  const first = listed(replicas);
  r.send(
    first.type === 'etcd.members.listed' ? { ...first, etcd: { ...first.etcd, leader: 'a0' } } : first,
    memberList(replicas),
    listed(replicas),
  );
  r.send(ok('setDisruptionBudget', { minAvailable: replicas - 1 }));
  expect(r.d.state).toBe('steady');
  return r;
}
