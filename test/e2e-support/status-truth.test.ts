import { describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import {
  AVAILABLE_ALLOWANCE_MS,
  DEGRADED_ALLOWANCE_MS,
  judge,
  newMemory,
  UntrueStatus,
  type EtcdSeen,
  type PodSeen,
  type TruthMemory,
} from '../e2e/status-truth.ts';
import { until } from '../../localcluster/until.ts';

const T0 = Date.parse('2026-11-27T10:00:00Z');
const S = 1000;

/** A 3-member cluster's status with these Available and Degraded. */
function cluster(available: 'True' | 'False', degraded: 'True' | 'False', degradedMessage = 'nothing needs attention') {
  const at = new Date(T0 - 600 * S).toISOString();
  return {
    metadata: { namespace: 'ns', name: 'demo', uid: 'u1' },
    spec: { replicas: 3 },
    status: {
      observed: { step: 'Steady' },
      readyMembers: 2,
      members: ['demo-0', 'demo-1', 'demo-2'].map((name) => ({ name, role: 'voter' as const })),
      conditions: [
        { type: 'Available', status: available, reason: 'QuorumHealthy', message: '3 voters', lastTransitionTime: at },
        {
          type: 'Degraded',
          status: degraded,
          reason: degraded === 'True' ? 'MemberUnhealthy' : 'Steady',
          message: degradedMessage,
          lastTransitionTime: at,
        },
      ],
    },
  } as unknown as EtcdCluster;
}

const voters = [
  { id: 'a0', name: 'demo-0' },
  { id: 'a1', name: 'demo-1' },
  { id: 'a2', name: 'demo-2' },
];
const allHealthy: EtcdSeen = { answered: true, voters, healthy: ['a0', 'a1', 'a2'] };
const pod = (name: string, over: Partial<PodSeen> = {}): PodSeen => ({
  name,
  uid: `uid-${name}`,
  ready: true,
  readySince: T0 - 900 * S,
  restarts: 0,
  note: '',
  ...over,
});
const readyPods = [pod('demo-0'), pod('demo-1'), pod('demo-2')];

/** One read: the status at `statusAt`, the world a little after. */
function read(
  c: EtcdCluster,
  statusAt: number,
  world: { etcd?: EtcdSeen; pods?: PodSeen[] },
  memory: TruthMemory,
  managerSince: number | null = 0,
): void {
  judge({
    cluster: c,
    statusAt,
    world: { at: statusAt + 50, etcd: world.etcd ?? allHealthy, pods: world.pods ?? readyPods, votersByStatus: [] },
    managerSince,
    memory,
  });
}

describe('e2e status truth: Available and Degraded held to etcd and the Pods', () => {
  it('passes a status that says what etcd and the Pods say', () => {
    expect(() => read(cluster('True', 'False'), T0, {}, newMemory())).not.toThrow();
  });

  it("fails on the wiped member's lie: Degraded False, nothing needs attention, while a voter crash-loops for minutes", () => {
    const looping = pod('demo-1', {
      ready: false,
      readySince: T0 - 180 * S,
      restarts: 5,
      note: 'CrashLoopBackOff: back-off 1m20s restarting failed container=etcd',
    });
    const etcd: EtcdSeen = { answered: true, voters, healthy: ['a0', 'a2'] };
    const lie = () =>
      read(cluster('True', 'False'), T0, { etcd, pods: [pod('demo-0'), looping, pod('demo-2')] }, newMemory());
    expect(lie).toThrow(UntrueStatus);
    expect(lie).toThrow(
      /Degraded=False Steady: nothing needs attention .*voter demo-1's Pod not Ready since .*5 restarts, CrashLoopBackOff/,
    );
  });

  it('fails Available True once no member has answered a linearizable member list for longer than the allowance', () => {
    const memory = newMemory();
    const down: EtcdSeen = { answered: false, error: 'demo-0: DEADLINE_EXCEEDED' };
    read(cluster('True', 'True'), T0, { etcd: down }, memory);
    read(cluster('True', 'True'), T0 + AVAILABLE_ALLOWANCE_MS - S, { etcd: down }, memory);
    expect(() => read(cluster('True', 'True'), T0 + AVAILABLE_ALLOWANCE_MS + S, { etcd: down }, memory)).toThrow(
      /Available=True QuorumHealthy: 3 voters .*no member answered a linearizable member list: demo-0: DEADLINE_EXCEEDED/,
    );
  });

  it('fails Available True with fewer voters answering their status call than a quorum, past the allowance', () => {
    const memory = newMemory();
    const one: EtcdSeen = { answered: true, voters, healthy: ['a0'] };
    read(cluster('True', 'True'), T0, { etcd: one }, memory);
    expect(() => read(cluster('True', 'True'), T0 + AVAILABLE_ALLOWANCE_MS + S, { etcd: one }, memory)).toThrow(
      /1 of 3 voters answered their status call, a quorum is 2/,
    );
  });

  it('fails Degraded False while a learner crash-loops (not Ready after restarts) past the grace', () => {
    const learner = pod('demo-3', { ready: false, readySince: T0 - DEGRADED_ALLOWANCE_MS - S, restarts: 2 });
    expect(() => read(cluster('True', 'False'), T0, { pods: [...readyPods, learner] }, newMemory())).toThrow(
      /demo-3's etcd restarted 2 times/,
    );
  });

  it('fails Degraded False while a voter etcd lists has had no Pod past the grace', () => {
    const memory = newMemory();
    const two = [pod('demo-0'), pod('demo-2')];
    read(cluster('True', 'False'), T0, { pods: two }, memory);
    expect(() => read(cluster('True', 'False'), T0 + DEGRADED_ALLOWANCE_MS + S, { pods: two }, memory)).toThrow(
      /voter demo-1 has no Pod/,
    );
  });

  describe('never fires at the edges', () => {
    const unready = (forMs: number) => [
      pod('demo-0'),
      pod('demo-1', { ready: false, readySince: T0 - forMs }),
      pod('demo-2'),
    ];

    it("a voter unready within the product's 30 s grace and its slack", () => {
      expect(() =>
        read(cluster('True', 'False'), T0, { pods: unready(DEGRADED_ALLOWANCE_MS - S) }, newMemory()),
      ).not.toThrow();
    });

    it('tells once what it saw within the allowance, so a log shows the edges a run passed', () => {
      const told: string[] = [];
      const memory = newMemory();
      const c = cluster('True', 'False');
      for (const statusAt of [T0, T0 + S])
        judge({
          cluster: c,
          statusAt,
          world: { at: statusAt, etcd: allHealthy, pods: unready(5 * S), votersByStatus: [] },
          managerSince: 0,
          memory,
          tell: (line) => told.push(line),
        });
      expect(told).toEqual([
        expect.stringMatching(
          /^status truth: Degraded stands while voter demo-1's Pod not Ready since .*: within 40 s$/,
        ),
      ]);
    });

    it('Degraded True while a voter is unready: the status says so', () => {
      expect(() => read(cluster('True', 'True'), T0, { pods: unready(600 * S) }, newMemory())).not.toThrow();
    });

    it('no manager running: the status is stale, not false', () => {
      expect(() => read(cluster('True', 'False'), T0, { pods: unready(600 * S) }, newMemory(), null)).not.toThrow();
    });

    it('a manager just started: the allowance counts from its start', () => {
      const since = T0 - DEGRADED_ALLOWANCE_MS + S;
      expect(() => read(cluster('True', 'False'), T0, { pods: unready(600 * S) }, newMemory(), since)).not.toThrow();
    });

    it('a contradiction a read did not show starts over: a leader election is no lost quorum', () => {
      const memory = newMemory();
      const down: EtcdSeen = { answered: false, error: 'no leader' };
      read(cluster('True', 'False'), T0, { etcd: down }, memory);
      read(cluster('True', 'False'), T0 + 2 * S, {}, memory);
      expect(() =>
        read(cluster('True', 'False'), T0 + AVAILABLE_ALLOWANCE_MS + 3 * S, { etcd: down }, memory),
      ).not.toThrow();
    });

    it('only what the status claimed before the world was read is judged', () => {
      const c = cluster('True', 'False');
      const world = { at: T0 - 1, etcd: allHealthy, pods: readyPods, votersByStatus: [] };
      expect(() => judge({ cluster: c, statusAt: T0, world, managerSince: 0, memory: newMemory() })).toThrow(
        /the world must be read after the status/,
      );
    });
  });

  it('ends a wait at once: until gives up on an untrue status instead of polling on', async () => {
    let probes = 0;
    const wait = until('settled', () => {
      probes++;
      throw new UntrueStatus('Degraded=False, but demo-1 crash-loops');
    });
    await expect(wait).rejects.toThrow(UntrueStatus);
    expect(probes).toBe(1);
  });
});
