import { describe, expect, it } from 'vitest';
import type { EtcdClusterStatus } from '../../api/v1alpha1/index.ts';
import { clusterMachine } from '../../machines/cluster.ts';
import { peerURL } from '../../machines/policy.ts';
import type { ClusterEvent } from '../../machines/types.ts';
import { clusterStatus } from '../../manager/status.ts';
import { Driver } from '../machines/harness.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'u1' };
let clock = Date.parse('2026-11-21T12:00:00Z');
const at = (): number => (clock += 1000);
const range = (n: number): number[] => [...Array(n).keys()];

/** etcd's list: `voters` started voters, then an optional learner (started or not). */
const listed = (voters: number, learner?: { n: number; started: boolean }): ClusterEvent => {
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
  const healthy = all.filter((m) => m.name !== '').map((m) => m.id);
  return { type: 'etcd.members.listed', at: at(), etcd: { clusterID: 'c1', members: all, healthy } };
};
const memberList = (n: number): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: at(),
  members: range(n).map((i) => ({
    name: `demo-${i}`,
    ordinal: i,
    bootstrap: i === 0,
    dormant: false,
    state: 'voter',
    deleting: false,
  })),
});
const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: at(), result }) as ClusterEvent;
const spec = (replicas: number): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: at(),
  spec: { replicas, version: '3.6.16' },
  progressDeadlineSeconds: 600,
});

/** Feeds events, writing the status after each step as the runtime does, and records every status. */
class Recorder {
  readonly d = new Driver(clusterMachine, { cluster: ref });
  status: EtcdClusterStatus | undefined;
  readonly seen: { state: string; status: EtcdClusterStatus }[] = [];
  #seq = 0;

  send(...events: ClusterEvent[]): void {
    for (const e of events) {
      const from = this.d.state;
      this.d.send(e);
      this.status = clusterStatus(
        this.status,
        { seq: ++this.#seq, from, to: this.d.state, context: this.d.context, generation: 1 },
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

const condition = (s: EtcdClusterStatus | undefined, type: string) => s?.conditions?.find((c) => c.type === type);
/** Every recorded status in which `type` claimed True. */
const claims = (r: Recorder, type: string) => r.seen.filter((x) => condition(x.status, type)?.status === 'True');

function bootstrap(replicas: number): Recorder {
  const r = new Recorder();
  r.send(memberList(0), spec(replicas), ok('ensureServices'), ok('createMember'), listed(1));
  for (let n = 1; n < replicas; n++) r.join(n);
  r.send(memberList(replicas), listed(replicas), ok('setDisruptionBudget', { minAvailable: replicas - 1 }));
  expect(r.d.state).toBe('steady');
  return r;
}

describe('manager: membership conditions say only what was reached', () => {
  it('Bootstrapped is set once the cluster rests at 3 voters, not after the seed alone', () => {
    const r = bootstrap(3);
    // Every status that claims it was written at 3 healthy voters.
    const said = claims(r, 'Bootstrapped').map((x) => condition(x.status, 'Available')?.message);
    expect(said.length).toBeGreaterThan(0);
    expect(new Set(said)).toEqual(new Set(['3 of 3 voters healthy']));
    expect(condition(r.status, 'Bootstrapped')?.message).toBe(
      'etcd cluster c1 started from a seed and grew to 3 voters',
    );
  });

  it('ScaledUp says "scaling up" at 4 of 5 and "scaled up to 5" only once etcd lists 5 voters', () => {
    const r = bootstrap(3);
    r.send(spec(5), ok('setDisruptionBudget', { minAvailable: 4 }));
    r.join(3);
    expect(condition(r.status, 'ScaledUp')).toMatchObject({ status: 'False', reason: 'ScalingUp' });
    r.join(4);
    expect(claims(r, 'ScaledUp')).toEqual([]);
    expect(condition(r.status, 'ScaledUp')).toMatchObject({
      status: 'False',
      message: 'scaling up to 5 voters: 4 so far',
    });
    r.send(memberList(5), listed(5));
    expect(r.d.state).toBe('steady');
    expect(condition(r.status, 'ScaledUp')).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: 'scaled up to 5 voters',
    });
  });

  it('ScaledDown waits for the last member to leave etcd, across the budget lowered between members', () => {
    const r = bootstrap(3);
    r.send(spec(1), ok('deleteMember'), listed(2), memberList(2));
    expect(r.d.state).toBe('observing');
    r.send(listed(2), ok('setDisruptionBudget', { minAvailable: 2 }));
    expect(condition(r.status, 'ScaledDown')).toMatchObject({ status: 'False', reason: 'ScalingDown' });
    r.send(ok('deleteMember'), listed(1), memberList(1), listed(1));
    expect(claims(r, 'ScaledDown').map((x) => x.state)).not.toContain('observing');
    r.send(ok('setDisruptionBudget', { minAvailable: 1 }));
    expect(r.d.state).toBe('steady');
    expect(condition(r.status, 'ScaledDown')).toMatchObject({ status: 'True', message: 'scaled down to 1 voters' });
  });
});
