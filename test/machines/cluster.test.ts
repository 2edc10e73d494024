import { describe, expect, it } from 'vitest';
import type { StateValue } from 'xstate';
import { clusterMachine } from '../../machines/cluster.ts';
import { describeCluster } from '../../machines/describe.ts';
import { pathHasTag, TAG } from '../../machines/tags.ts';
import { peerURL, preUpgradeSnapshotName, retryDelay, troubled } from '../../machines/policy.ts';
import type { MemberState } from '../../machines/member-state.ts';
import type { ClusterEvent, EtcdObservation, MemberObservation } from '../../machines/types.ts';
import { Driver, play, type Intent, type Step } from './harness.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'uid-1' };
const url = (n: number): string => peerURL(ref, `demo-${n}`);
const id = (n: number): string => `a${n}`;

/** etcd's member list: [ordinal, learner, started] per member; all started members healthy unless told. */
function etcd(
  members: [number, boolean, boolean][],
  opts: { unhealthy?: number[]; clusterID?: string; leader?: number } = {},
): ClusterEvent {
  const list: EtcdObservation['members'] = members.map(([n, learner, started]) => ({
    id: id(n),
    name: started ? `demo-${n}` : '',
    peerURL: url(n),
    learner,
  }));
  const healthy = members.filter(([n, , started]) => started && !opts.unhealthy?.includes(n)).map(([n]) => id(n));
  return {
    type: 'etcd.members.listed',
    at: now(),
    etcd: {
      clusterID: opts.clusterID ?? 'c1',
      members: list,
      healthy,
      ...(opts.leader !== undefined ? { leader: id(opts.leader) } : {}),
    },
  };
}
const voters = (...ns: number[]): ClusterEvent => etcd(ns.map((n) => [n, false, true]));
/** Voters ns, all healthy, demo-0 leading: a new cluster's start ends on a leader among its members. */
const led = (...ns: number[]): ClusterEvent =>
  etcd(
    ns.map((n) => [n, false, true]),
    { leader: ns[0] },
  );

function members(list: [number, MemberState, Partial<MemberObservation>?][]): ClusterEvent {
  const obs = list.map(([n, state, o]) => ({
    name: `demo-${n}`,
    ordinal: n,
    bootstrap: n === 0,
    dormant: false,
    state,
    deleting: false,
    ...o,
  }));
  return { type: 'k8s.members.listed', at: now(), members: obs };
}

let clock = 1_000_000;
const now = (): number => (clock += 10);
const spec = (replicas: number, version = '3.6.16', o: { snapshotCount?: number } = {}): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: now(),
  spec: { replicas, version },
  progressDeadlineSeconds: 600,
  ...o,
});
const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: now(), result }) as ClusterEvent;
const failed = (kind: string, code: string, message = code): ClusterEvent =>
  ({ type: `effect.${kind}.failed`, at: now(), error: { code, message } }) as ClusterEvent;
const tick = (ms: number): ClusterEvent => ({ type: 'timer.tick', at: (clock += ms) });

/** A machine that has seen its cluster has no EtcdMembers yet (the spec comes next). */
function newCluster(): Driver<typeof clusterMachine> {
  const d = new Driver(clusterMachine, { cluster: ref });
  d.send(members([]));
  return d;
}

const addLearner = (n: number): Intent => ({ type: 'addLearner', params: { member: `demo-${n}`, peerURL: url(n) } });
const createJoiner = (n: number, initialCluster: string): Intent => ({
  type: 'createMember',
  params: { member: `demo-${n}`, ordinal: n, bootstrap: false, initialCluster, version: '3.6.16' },
});
/** setDisruptionBudget as the machine asks for it, and its outcome. */
const budget = (minAvailable: number | null): Intent => ({
  type: 'setDisruptionBudget',
  params: { cluster: 'demo', minAvailable },
});
const budgetSet = (minAvailable: number | null): ClusterEvent => ok('setDisruptionBudget', { minAvailable });
const joinedAfter = (ns: number[]): string => ns.map((n) => `demo-${n}=${url(n)}`).join(',');

/** Joins learner n into a cluster whose voters are `before`, ending in `observing`. */
function join(d: Driver<typeof clusterMachine>, n: number, before: number[], prefix: string): void {
  const ic = joinedAfter([...before, n]);
  play(d, [
    [
      ok('addLearner', { memberID: id(n), initialCluster: ic }),
      `${prefix}.creatingMember.running`,
      [createJoiner(n, ic)],
    ],
    [ok('createMember'), `${prefix}.awaitingStart`, []],
    [
      etcd([...before.map((b): [number, boolean, boolean] => [b, false, true]), [n, true, false]]),
      `${prefix}.awaitingStart`,
      [],
    ],
    [
      etcd([...before.map((b): [number, boolean, boolean] => [b, false, true]), [n, true, true]]),
      `${prefix}.promoting.running`,
      [{ type: 'promoteLearner', params: { member: `demo-${n}`, memberID: id(n) } }],
    ],
    [ok('promoteLearner'), 'observing', []],
  ]);
}

/**
 * A bootstrap of `replicas` by the seed path, as a journal written before static starts left it:
 * its seed demo-0 asked for. (Made as a one-member start, then given the target the old machine
 * latched, as a journal keeps it.)
 */
function seeding(replicas: number): Driver<typeof clusterMachine> {
  const d = newCluster();
  play(d, [
    [spec(1), 'bootstrapping.seeding.creatingServices.running'],
    [ok('ensureServices'), 'bootstrapping.seeding.creatingSeed.running'],
  ]);
  const target = { replicas, version: '3.6.16' };
  d.snapshot = clusterMachine.resolveState({
    value: d.snapshot.value as StateValue,
    context: { ...d.context, spec: target, target },
  });
  return d;
}

/** createMember of member n of a new cluster of `size` started whole. */
const startMember = (n: number, size: number, first = 0): Intent => ({
  type: 'createMember',
  params: {
    member: `demo-${n}`,
    ordinal: n,
    bootstrap: true,
    initialCluster: joinedAfter(range(size).map((i) => first + i)),
    version: '3.6.16',
  },
});

/** A new cluster of `size` started whole: every EtcdMember created, waiting for a quorum of them. */
function started(size: number): Driver<typeof clusterMachine> {
  const d = newCluster();
  play(d, [
    [spec(size), 'bootstrapping.seeding.creatingServices.running'],
    [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(0, size)]],
  ]);
  for (let n = 1; n < size; n++)
    play(d, [[ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(n, size)]]]);
  play(d, [[ok('createMember'), 'bootstrapping.starting.awaitingQuorum', []]]);
  return d;
}

/** A cluster bootstrapped to `replicas` voters, its members listed: etcd's word ends the bootstrap. */
function bootstrapped(replicas: number): Driver<typeof clusterMachine> {
  const d = replicas === 1 ? seeding(1) : started(replicas);
  play(d, [
    replicas === 1
      ? [ok('createMember'), 'bootstrapping.seeding.awaitingSeed']
      : [led(...range(replicas)), 'observing'],
  ]);
  if (replicas === 1) play(d, [[voters(0), 'observing']]);
  play(d, [[members(range(replicas).map((n) => [n, 'voter'])), 'observing']]);
  return d;
}

/** A cluster bootstrapped to `replicas` voters, its PodDisruptionBudget set, and steady. */
function steadyCluster(replicas: number): Driver<typeof clusterMachine> {
  const d = bootstrapped(replicas);
  play(d, [
    [voters(...range(replicas)), 'updatingBudget.running'],
    [budgetSet(replicas >= 3 ? replicas - 1 : replicas), 'steady'],
  ]);
  return d;
}

/** Members 0..n-1, all voters, as EtcdMembers. */
const votingMembers = (n: number): ClusterEvent => members(range(n).map((i) => [i, 'voter']));
const range = (n: number): number[] => [...Array(n).keys()];

describe('cluster machine', () => {
  it('starts a new cluster of 3 whole: every member named, with one initial cluster, created at once', () => {
    const d = newCluster();
    expect(d.state).toBe('pending');
    play(d, [
      [
        spec(3),
        'bootstrapping.seeding.creatingServices.running',
        [{ type: 'ensureServices', params: { cluster: 'demo' } }],
      ],
      // The plan is in the context the first createMember is journaled with: before any member exists.
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(0, 3)]],
    ]);
    expect(d.context.start).toEqual({
      members: [0, 1, 2].map((n) => ({ name: `demo-${n}`, ordinal: n })),
      initialCluster: joinedAfter([0, 1, 2]),
    });
    expect(describeCluster(d.state, d.context).message).toBe(
      `creating EtcdMember demo-0 (1 of 3): a new cluster starts with all its members at once, each with the initial cluster demo-0, demo-1, demo-2`,
    );
    play(d, [
      [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(1, 3)]],
      [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(2, 3)]],
      [ok('createMember'), 'bootstrapping.starting.awaitingQuorum', []],
      // etcd answers from no member until a quorum of them started.
      [{ type: 'etcd.unreachable', at: now(), error: 'no leader' }, 'bootstrapping.starting.awaitingQuorum', []],
      // etcd lists every member of an initial cluster by name from the start; those not running do not answer.
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [1, 2] },
        ),
        'bootstrapping.starting.awaitingQuorum',
        [],
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'waiting for a quorum (2 of 3) of the initial cluster to start etcd together: started demo-0; not yet demo-1, demo-2',
    );
    // No learner is ever added: a quorum started, one of them leading, ends the bootstrap; all 3 are voters.
    play(d, [
      // Each answers its status call before they elected a leader: not yet.
      [voters(0, 1, 2), 'bootstrapping.starting.awaitingQuorum', []],
      [led(0, 1, 2), 'observing', []],
      [members(range(3).map((n) => [n, 'voter', { bootstrap: true }])), 'observing', []],
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'steady', []],
    ]);
    expect(d.context.clusterID).toBe('c1');
    expect(d.context.start).toBeNull();
    expect(d.context.nextOrdinal).toBe(3);
  });

  it('a new cluster of 5 (or 4, or 7) starts whole too; a quorum of it ends the start', () => {
    for (const size of [4, 5, 7]) {
      const d = started(size);
      expect(d.intents).toEqual([]);
      const q = Math.floor(size / 2) + 1;
      const upTo = (k: number): ClusterEvent =>
        etcd(
          range(size).map((n): [number, boolean, boolean] => [n, false, true]),
          { unhealthy: range(size).filter((n) => n >= k), leader: 0 },
        );
      play(d, [
        [upTo(q - 1), 'bootstrapping.starting.awaitingQuorum', []],
        [upTo(q), 'observing', []],
      ]);
      expect(d.context.memberNames).toEqual(range(size).map((n) => `demo-${n}`));
    }
  });

  it('a one-member cluster keeps the seed: created alone, with itself as the initial cluster', () => {
    const d = newCluster();
    play(d, [
      [spec(1), 'bootstrapping.seeding.creatingServices.running'],
      [
        ok('ensureServices'),
        'bootstrapping.seeding.creatingSeed.running',
        [
          {
            type: 'createMember',
            params: {
              member: 'demo-0',
              ordinal: 0,
              bootstrap: true,
              initialCluster: `demo-0=${url(0)}`,
              version: '3.6.16',
            },
          },
        ],
      ],
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed', []],
      [voters(0), 'observing', []],
      [members([[0, 'voter']]), 'observing', []],
      [voters(0), 'updatingBudget.running', [budget(1)]],
    ]);
    expect(d.context.start).toBeUndefined();
  });

  it('a manager killed between two members resumes with the same plan: the missing members, the same initial cluster', () => {
    const d = newCluster();
    play(d, [
      [spec(3), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(0, 3)]],
      [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(1, 3)]],
    ]);
    // Killed with createMember demo-1 asked: its outcome comes from recover, after the restart.
    d.restart();
    expect(d.state).toBe('bootstrapping.starting.creatingMember.running');
    play(d, [
      // A spec edited meanwhile changes nothing of the start: the plan was journaled before demo-0.
      [spec(5), 'bootstrapping.starting.creatingMember.running', []],
      [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(2, 3)]],
    ]);
    d.restart();
    play(d, [
      [failed('createMember', 'ERR_KUBE_UNAVAILABLE'), 'bootstrapping.starting.creatingMember.backingOff', []],
      [tick(1000), 'bootstrapping.starting.creatingMember.running', [startMember(2, 3)]],
      [ok('createMember'), 'bootstrapping.starting.awaitingQuorum', []],
      [led(0, 1, 2), 'observing', []],
    ]);
    expect(d.context.clusterID).toBe('c1');
    // The edit is taken after the start: two learners, one at a time.
    play(d, [[members(range(3).map((n) => [n, 'voter'])), 'observing']]);
    play(d, [[voters(0, 1, 2), 'bootstrapping.joining.addingLearner.running', [addLearner(3)]]]);
  });

  it('a start entered again after a failure keeps its plan once one of its members exists, and plans anew before', () => {
    const d = newCluster();
    const invalid = (): ClusterEvent => ({
      type: 'effect.createMember.failed',
      at: now(),
      error: { code: 'ERR_CREATE_MEMBER_FOREIGN', message: 'demo-0 is not ours', retryable: false },
    });
    play(d, [
      [spec(3), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(0, 3)]],
      [invalid(), 'failed', []],
      // Nothing of the plan exists: the new spec gets a new plan, past the name that was refused.
      [spec(2), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(3, 2, 3)]],
      [ok('createMember'), 'bootstrapping.starting.creatingMember.running', [startMember(4, 2, 3)]],
      [invalid(), 'failed', []],
      // demo-3 exists with this initial cluster: whatever the spec says now, demo-4 gets the same.
      [spec(3), 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.starting.creatingMember.running', [startMember(4, 2, 3)]],
    ]);
  });

  it('a member whose Pod never starts: a quorum starts without it, it waits as a voter, and describe names it', () => {
    const d = started(3);
    const stuck = {
      reason: 'Unschedulable',
      message: 'its Pod cannot be scheduled: 0/3 nodes are available',
      since: 1,
    };
    play(d, [
      [
        members([
          [0, 'bootstrapping', { bootstrap: true }],
          [1, 'bootstrapping', { bootstrap: true }],
          [2, 'bootstrapping', { bootstrap: true, trouble: stuck }],
        ]),
        'bootstrapping.starting.awaitingQuorum',
        [],
      ],
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [2], leader: 0 },
        ),
        'observing',
        [],
      ],
      [
        members([
          [0, 'voter', { bootstrap: true }],
          [1, 'voter', { bootstrap: true }],
          [2, 'bootstrapping', { bootstrap: true, trouble: stuck }],
        ]),
        'observing',
        [],
      ],
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [2] },
        ),
        'updatingBudget.running',
        [budget(2)],
      ],
      [budgetSet(2), 'steady', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      '3 voters, 2 healthy: a quorum; demo-2 has not started: a member of the initial cluster, it joins as soon as its Pod runs; EtcdMember demo-2: its Pod cannot be scheduled: 0/3 nodes are available',
    );
    // Its node is lost: it is replaced, as a learner that never started is.
    play(d, [
      [
        members([
          [0, 'voter', { bootstrap: true }],
          [1, 'voter', { bootstrap: true }],
          [2, 'nodeLost', { bootstrap: true }],
        ]),
        'replacing.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-2' } }],
      ],
    ]);
  });

  it('a start without a quorum waits, naming who has not started', () => {
    const d = started(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [1, 2] },
        ),
        'bootstrapping.starting.awaitingQuorum',
        [],
      ],
      [tick(120_000), 'bootstrapping.starting.awaitingQuorum', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain('started demo-0; not yet demo-1, demo-2');
  });

  it('a restored cluster keeps the seed path: one member restores the snapshot, the others join as learners', () => {
    const d = newCluster();
    play(d, [
      [{ ...spec(3), restore: true } as ClusterEvent, 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.seeding.verifyingRestore.creatingJob.running'],
    ]);
  });

  it('a journal written mid-seed (before static starts) resumes by the seed path: learners one at a time', () => {
    const d = seeding(3);
    play(d, [
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed', []],
      [etcd([[0, false, false]]), 'bootstrapping.seeding.awaitingSeed', []],
      [voters(0), 'observing', []],
      [voters(0), 'bootstrapping.joining.addingLearner.running', [addLearner(1)]],
    ]);
    expect(d.context.clusterID).toBe('c1');
    join(d, 1, [0], 'bootstrapping.joining');
    play(d, [[voters(0, 1), 'bootstrapping.joining.addingLearner.running', [addLearner(2)]]]);
    join(d, 2, [0, 1], 'bootstrapping.joining');
    play(d, [
      [
        members([
          [0, 'voter'],
          [1, 'voter'],
          [2, 'voter'],
        ]),
        'observing',
      ],
      // The target reached: the PodDisruptionBudget is set once, at the end of the bootstrap.
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'steady', []],
    ]);
  });

  /** A cluster of 3 bootstrapping, its first learner started and its promotion asked for. */
  function promotingSecondOfThree(): Driver<typeof clusterMachine> {
    const d = seeding(3);
    play(d, [
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed'],
      [voters(0), 'observing'],
      [voters(0), 'bootstrapping.joining.addingLearner.running'],
      [
        ok('addLearner', { memberID: id(1), initialCluster: joinedAfter([0, 1]) }),
        'bootstrapping.joining.creatingMember.running',
      ],
      [ok('createMember'), 'bootstrapping.joining.awaitingStart'],
      [
        etcd([
          [0, false, true],
          [1, true, true],
        ]),
        'bootstrapping.joining.promoting.running',
      ],
    ]);
    return d;
  }

  /** A cluster of 2 bootstrapping, its learner started and its promotion asked for. */
  function promotingSecond(): Driver<typeof clusterMachine> {
    const d = seeding(2);
    play(d, [
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed'],
      [voters(0), 'observing'],
      [voters(0), 'bootstrapping.joining.addingLearner.running'],
    ]);
    play(d, [
      [
        ok('addLearner', { memberID: id(1), initialCluster: joinedAfter([0, 1]) }),
        'bootstrapping.joining.creatingMember.running',
      ],
      [ok('createMember'), 'bootstrapping.joining.awaitingStart'],
      [
        etcd([
          [0, false, true],
          [1, true, true],
        ]),
        'bootstrapping.joining.promoting.running',
      ],
    ]);
    return d;
  }

  it('a cluster restored from a snapshot checks it with a Job before the seed exists, then seeds as usual', () => {
    const d = newCluster();
    const restoreJob = (job: Record<string, unknown> | null): ClusterEvent => ({
      type: 'k8s.restoreJob.observed',
      at: now(),
      job: job && { uid: 'j1', active: false, succeeded: false, failed: null, deleting: false, ...job },
    });
    play(d, [
      [{ ...spec(3), restore: true } as ClusterEvent, 'bootstrapping.seeding.creatingServices.running'],
      [restoreJob(null), 'bootstrapping.seeding.creatingServices.running', []],
      [
        ok('ensureServices'),
        'bootstrapping.seeding.verifyingRestore.creatingJob.running',
        [{ type: 'createRestoreJob', params: { cluster: 'demo' } }],
      ],
      [
        ok('createRestoreJob', { uid: 'j1', location: 's3://b/k.db' }),
        'bootstrapping.seeding.verifyingRestore.awaitingJob',
        [],
      ],
      [restoreJob({ active: true }), 'bootstrapping.seeding.verifyingRestore.awaitingJob', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain(
      'checking the snapshot at s3://b/k.db before any member starts',
    );
    play(d, [[restoreJob({ succeeded: true }), 'bootstrapping.seeding.creatingSeed.running']]);
    expect(d.intents.map((i) => i.type)).toEqual(['createMember']);
    expect(describeCluster(d.state, d.context).message).toBe(
      'creating the seed member demo-0 from the snapshot at s3://b/k.db',
    );
    // A restart mid-seeding does not check the snapshot again.
    d.restart();
    play(d, [[ok('createMember'), 'bootstrapping.seeding.awaitingSeed', []]]);
  });

  it('a cluster restored from a named EtcdSnapshot holds it until its seed runs, then lets it go', () => {
    const d = newCluster();
    const hold = { snapshot: 'nightly', cluster: 'demo' };
    play(d, [
      [
        { ...spec(3), restore: true, restoreSnapshot: 'nightly' } as ClusterEvent,
        'bootstrapping.seeding.creatingServices.running',
      ],
      [ok('ensureServices'), 'bootstrapping.seeding.holdingRestore.running', [{ type: 'holdSnapshot', params: hold }]],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain(
      "holding EtcdSnapshot nightly with this cluster's finalizer",
    );
    play(d, [
      [
        ok('holdSnapshot'),
        'bootstrapping.seeding.verifyingRestore.creatingJob.running',
        [{ type: 'createRestoreJob', params: { cluster: 'demo' } }],
      ],
      [ok('createRestoreJob', { uid: 'j1' }), 'bootstrapping.seeding.verifyingRestore.awaitingJob'],
      [
        {
          type: 'k8s.restoreJob.observed',
          at: now(),
          job: { uid: 'j1', active: false, succeeded: true, failed: null, deleting: false },
        },
        'bootstrapping.seeding.creatingSeed.running',
      ],
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed', []],
    ]);
    // A crash mid-seeding neither holds it again nor forgets to let it go.
    d.restart();
    play(d, [
      [etcd([[0, false, false]]), 'bootstrapping.seeding.awaitingSeed', []],
      [
        voters(0),
        'bootstrapping.seeding.releasingRestore.releasing.running',
        [{ type: 'releaseSnapshotHold', params: hold }],
      ],
      [ok('releaseSnapshotHold'), 'observing', []],
    ]);
    expect(d.context.holding).toBeNull();
  });

  it('a cluster to restore from an EtcdSnapshot being deleted fails before any member exists, saying why', () => {
    const d = newCluster();
    play(d, [
      [
        { ...spec(3), restore: true, restoreSnapshot: 'nightly' } as ClusterEvent,
        'bootstrapping.seeding.creatingServices.running',
      ],
      [ok('ensureServices'), 'bootstrapping.seeding.holdingRestore.running'],
      [
        {
          type: 'effect.holdSnapshot.failed',
          at: now(),
          error: {
            code: 'ERR_SNAPSHOT_GONE',
            message: 'EtcdSnapshot default/nightly is being deleted, its stored file with it',
            retryable: false,
          },
        },
        'failed',
        [],
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain(
      'EtcdSnapshot nightly, named by spec.bootstrap.restore.snapshotName, cannot be held to restore from: EtcdSnapshot default/nightly is being deleted',
    );
    expect(d.context.memberNames).toEqual([]);
  });

  it('a held snapshot that fails its check is let go before the cluster fails, saying why', () => {
    const d = newCluster();
    play(d, [
      [
        { ...spec(3), restore: true, restoreSnapshot: 'nightly' } as ClusterEvent,
        'bootstrapping.seeding.creatingServices.running',
      ],
      [ok('ensureServices'), 'bootstrapping.seeding.holdingRestore.running'],
      [ok('holdSnapshot'), 'bootstrapping.seeding.verifyingRestore.creatingJob.running'],
      [
        ok('createRestoreJob', { uid: 'j1', location: 's3://b/k.db' }),
        'bootstrapping.seeding.verifyingRestore.awaitingJob',
      ],
      [
        {
          type: 'k8s.restoreJob.observed',
          at: now(),
          job: { uid: 'j1', active: false, succeeded: false, deleting: false, failed: 'fetch-snapshot failed: x' },
        },
        'bootstrapping.seeding.releasingRestore.releasing.running',
        [{ type: 'releaseSnapshotHold', params: { snapshot: 'nightly', cluster: 'demo' } }],
      ],
      [ok('releaseSnapshotHold'), 'failed', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain(
      'the snapshot at s3://b/k.db failed its check: fetch-snapshot failed: x',
    );
  });

  it('a snapshot that fails its check fails the cluster before any member is created, saying why', () => {
    const d = newCluster();
    play(d, [
      [{ ...spec(3), restore: true } as ClusterEvent, 'bootstrapping.seeding.creatingServices.running'],
      [ok('ensureServices'), 'bootstrapping.seeding.verifyingRestore.creatingJob.running'],
      [
        ok('createRestoreJob', { uid: 'j1', location: 's3://b/k.db' }),
        'bootstrapping.seeding.verifyingRestore.awaitingJob',
      ],
      [
        {
          type: 'k8s.restoreJob.observed',
          at: now(),
          job: {
            uid: 'j1',
            active: false,
            succeeded: false,
            deleting: false,
            failed: 'fetch-snapshot failed: sha256 x, not y',
          },
        },
        'failed',
        [],
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'the cluster is not started: the snapshot at s3://b/k.db failed its check: fetch-snapshot failed: sha256 x, not y; no member was created. Delete the EtcdCluster and create it again from a good snapshot',
    );
    expect(d.context.memberNames).toEqual([]);
  });

  it('promoting retries every 500 ms while the learner is not in sync (etcd says "not yet")', () => {
    const d = promotingSecond();
    play(d, [
      [failed('promoteLearner', 'ERR_LEARNER_NOT_IN_SYNC'), 'bootstrapping.joining.promoting.backingOff', []],
      [tick(400), 'bootstrapping.joining.promoting.backingOff', []],
      [
        tick(100),
        'bootstrapping.joining.promoting.running',
        [{ type: 'promoteLearner', params: { member: 'demo-1', memberID: id(1) } }],
      ],
      [failed('promoteLearner', 'ERR_LEARNER_NOT_IN_SYNC'), 'bootstrapping.joining.promoting.backingOff', []],
      [tick(500), 'bootstrapping.joining.promoting.running'],
      [ok('promoteLearner'), 'observing'],
    ]);
    expect(d.context.lastError).toBeNull();
  });

  it('promoting backs off 1 s, then 2 s, after failures that are not etcd holding a change', () => {
    const d = promotingSecond();
    play(d, [
      [failed('promoteLearner', 'ERR_ETCD_UNAVAILABLE'), 'bootstrapping.joining.promoting.backingOff', []],
      [tick(900), 'bootstrapping.joining.promoting.backingOff', []],
      [tick(100), 'bootstrapping.joining.promoting.running'],
      [failed('promoteLearner', 'ERR_ETCD_UNAVAILABLE'), 'bootstrapping.joining.promoting.backingOff', []],
      [tick(1900), 'bootstrapping.joining.promoting.backingOff', []],
      [tick(100), 'bootstrapping.joining.promoting.running'],
    ]);
  });

  it('a machine starting without its journal adopts a running cluster: same cluster ID, no member name reused', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    // The spec first: nothing is decided until the members are seen, so nothing is seeded.
    play(d, [
      [spec(3), 'pending', []],
      [
        members([
          [0, 'voter'],
          [2, 'voter'],
          [5, 'voter'],
        ]),
        'observing',
        [],
      ],
    ]);
    const first = d.send(voters(0, 2, 5));
    // Whether a budget exists is not known: it is set (a create, or an update of the one there).
    expect(first.intents).toEqual([budget(2)]);
    expect(d.context.clusterID).toBe('c1');
    play(d, [
      [budgetSet(2), 'steady', []],
      [spec(4), 'updatingBudget.running', [budget(3)]],
      [budgetSet(3), 'scalingUp.joining.addingLearner.running', [addLearner(6)]],
    ]);
  });

  it('a failure trying again cannot fix ends in failed, which waits for a spec change and then starts over', () => {
    const d = seeding(3);
    play(d, []);
    const invalid: ClusterEvent = {
      type: 'effect.createMember.failed',
      at: now(),
      error: { code: 'ERR_CREATE_MEMBER', message: 'HTTP 422: spec.version: Invalid value', retryable: false },
    };
    play(d, [
      [invalid, 'failed', []],
      [tick(60_000), 'failed', []],
      [members([]), 'failed', []],
    ]);
    // No back-off is left: the runtime has no timer to wake it for.
    expect(d.context.retryAt).toBeNull();
    expect(describeCluster(d.state, d.context).message).toContain('ERR_CREATE_MEMBER: HTTP 422');
    play(d, [
      [
        spec(1),
        'bootstrapping.seeding.creatingServices.running',
        [{ type: 'ensureServices', params: { cluster: 'demo' } }],
      ],
    ]);
    expect(d.context.target?.replicas).toBe(1);
  });

  it('a spec edit during a step is taken at the next step boundary, never mid-step', () => {
    const d = seeding(2);
    play(d, [[ok('createMember'), 'bootstrapping.seeding.awaitingSeed']]);
    play(d, [
      [spec(5), 'bootstrapping.seeding.awaitingSeed', []],
      [voters(0), 'observing'],
    ]);
    // The seed's step is over; the edit waits only for etcd's member list after it.
    expect(d.context.target).toEqual({ replicas: 2, version: '3.6.16' });
    expect(describeCluster(d.state, d.context).message).toBe(
      "waiting for etcd's member list after the last change; then the new spec is taken: 5 voters (was 2)",
    );
    play(d, [[voters(0), 'bootstrapping.joining.addingLearner.running', [addLearner(1)]]]);
    expect(d.context.target).toEqual({ replicas: 5, version: '3.6.16' });
  });

  it('3 -> 5, then 4 while the 4th member joins: the join finishes and no 5th member is added', () => {
    const d = steadyCluster(3);
    play(d, [
      [spec(5), 'updatingBudget.running', [budget(4)]],
      [budgetSet(4), 'scalingUp.joining.addingLearner.running', [addLearner(3)]],
      // Mid-step: the learner is in etcd, so the join goes on to its promotion.
      [spec(4), 'scalingUp.joining.addingLearner.running', []],
    ]);
    join(d, 3, [0, 1, 2], 'scalingUp.joining');
    play(d, [
      [members(range(4).map((n) => [n, 'voter'])), 'observing'],
      // The boundary: 4 is taken, reached already; the budget follows (3 of 4), then steady.
      [voters(0, 1, 2, 3), 'updatingBudget.running', [budget(3)]],
      [budgetSet(3), 'steady', []],
    ]);
    expect(d.context.target).toEqual({ replicas: 4, version: '3.6.16' });
    expect(d.context.nextOrdinal).toBe(4);
  });

  it('scales down one member at a time, the newest first, through its EtcdMember', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        spec(2),
        'scalingDown.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-2' } }],
      ],
      [ok('deleteMember'), 'scalingDown.removing.awaitingRemoval', []],
      [
        members([
          [0, 'voter'],
          [1, 'voter'],
          [2, 'removing', { deleting: true }],
        ]),
        'scalingDown.removing.awaitingRemoval',
      ],
      [voters(0, 1), 'scalingDown.removing.awaitingRemoval'],
      [
        members([
          [0, 'voter'],
          [1, 'voter'],
        ]),
        'observing',
        [],
      ],
      [voters(0, 1), 'steady', []],
    ]);
  });

  it('scaling down removes an unhealthy member before a healthy one', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [1] },
        ),
        'steady',
      ],
      [
        spec(2),
        'scalingDown.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-1' } }],
      ],
    ]);
  });

  it('never shrinks below a healthy quorum: scale-down waits, reported as degraded', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [1, 2] },
        ),
        'degraded',
        [],
      ],
      [spec(2), 'degraded', []],
      [
        voters(0, 1, 2),
        'scalingDown.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-2' } }],
      ],
    ]);
  });

  it('parks at zero (Pods go, members stay) and wakes the same members', () => {
    const d = steadyCluster(3);
    const all = ['demo-0', 'demo-1', 'demo-2'];
    play(d, [
      [spec(0), 'parking.parkingMembers.running', [{ type: 'setDormant', params: { members: all, dormant: true } }]],
      [ok('setDormant'), 'parking.awaitingPark', []],
      [
        members([
          [0, 'dormant', { dormant: true }],
          [1, 'dormant', { dormant: true }],
          [2, 'voter', { dormant: true }],
        ]),
        'parking.awaitingPark',
      ],
      [
        members([
          [0, 'dormant', { dormant: true }],
          [1, 'dormant', { dormant: true }],
          [2, 'dormant', { dormant: true }],
        ]),
        'updatingBudget.running',
        [budget(null)],
      ],
      [budgetSet(null), 'dormant', []],
      [{ type: 'etcd.unreachable', at: now(), error: 'no endpoint answered' }, 'dormant', []],
      [spec(3), 'waking.wakingMembers.running', [{ type: 'setDormant', params: { members: all, dormant: false } }]],
      [ok('setDormant'), 'waking.awaitingWake', []],
      [
        members([
          [0, 'voter'],
          [1, 'voter'],
          [2, 'voter'],
        ]),
        'observing',
        [],
      ],
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'steady', []],
    ]);
    expect(d.context.nextOrdinal).toBe(3);
    expect(d.context.clusterID).toBe('c1');
  });

  it('wakes with the members it had, then scales to the new size', () => {
    const d = steadyCluster(3);
    play(d, [
      [spec(0), 'parking.parkingMembers.running'],
      [ok('setDormant'), 'parking.awaitingPark'],
    ]);
    play(d, [
      [
        members([
          [0, 'dormant', { dormant: true }],
          [1, 'dormant', { dormant: true }],
          [2, 'dormant', { dormant: true }],
        ]),
        'updatingBudget.running',
      ],
      [budgetSet(null), 'dormant'],
    ]);
    play(d, [
      [spec(5), 'waking.wakingMembers.running'],
      [ok('setDormant'), 'waking.awaitingWake'],
      [
        members([
          [0, 'voter'],
          [1, 'voter'],
          [2, 'voter'],
        ]),
        'observing',
      ],
      [voters(0, 1, 2), 'updatingBudget.running', [budget(4)]],
      [budgetSet(4), 'scalingUp.joining.addingLearner.running', [addLearner(3)]],
    ]);
  });

  it('replaces a member whose data is gone with a new member under a new name', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        members([
          [0, 'voter'],
          [1, 'replacing'],
          [2, 'voter'],
        ]),
        'replacing.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-1' } }],
      ],
      [ok('deleteMember'), 'replacing.removing.awaitingRemoval'],
      [
        members([
          [0, 'voter'],
          [2, 'voter'],
        ]),
        'replacing.removing.awaitingRemoval',
      ],
      [voters(0, 2), 'replacing.joining.addingLearner.running', [addLearner(3)]],
    ]);
  });

  it('replaces a member whose node is down (nodeLost) as one whose data is gone', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        members([
          [0, 'voter'],
          [1, 'nodeLost'],
          [2, 'voter'],
        ]),
        'replacing.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-1' } }],
      ],
    ]);
  });

  it('bootstrapping 3: a learner that never started because its node was lost is replaced, and the bootstrap goes on to 3 voters', () => {
    const d = seeding(3);
    play(d, [
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed'],
      [voters(0), 'observing'],
      [voters(0), 'bootstrapping.joining.addingLearner.running', [addLearner(1)]],
      [
        ok('addLearner', { memberID: id(1), initialCluster: joinedAfter([0, 1]) }),
        'bootstrapping.joining.creatingMember.running',
      ],
      [ok('createMember'), 'bootstrapping.joining.awaitingStart'],
      [
        etcd([
          [0, false, true],
          [1, true, false],
        ]),
        'bootstrapping.joining.awaitingStart',
      ],
      [
        members([
          [0, 'voter'],
          [1, 'joiningLearner'],
        ]),
        'bootstrapping.joining.awaitingStart',
      ],
    ]);
    // demo-1's node is gone: its Pod went with it, and its volume is pinned there.
    play(d, [
      [
        members([
          [0, 'voter'],
          [1, 'nodeLost'],
        ]),
        'observing',
        [],
      ],
      // The learner never started: removing it leaves the seed's quorum whole.
      [
        etcd([
          [0, false, true],
          [1, true, false],
        ]),
        'replacing.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-1' } }],
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toContain(
      'removing demo-1, whose node is down or gone, before a new member joins',
    );
    play(d, [
      [ok('deleteMember'), 'replacing.removing.awaitingRemoval'],
      // Its EtcdMember's finalizer took the learner out of etcd, then let go.
      [members([[0, 'voter']]), 'replacing.removing.awaitingRemoval'],
      [voters(0), 'replacing.joining.addingLearner.running', [addLearner(2)]],
    ]);
    join(d, 2, [0], 'replacing.joining');
    play(d, [[voters(0, 2), 'bootstrapping.joining.addingLearner.running', [addLearner(3)]]]);
    join(d, 3, [0, 2], 'bootstrapping.joining');
    play(d, [
      [
        members([
          [0, 'voter'],
          [2, 'voter'],
          [3, 'voter'],
        ]),
        'observing',
      ],
      [voters(0, 2, 3), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'steady', []],
    ]);
  });

  it('a learner whose node is lost while it catches up is replaced too, not promoted for ever', () => {
    const d = promotingSecondOfThree();
    play(d, [
      [failed('promoteLearner', 'ERR_LEARNER_NOT_IN_SYNC'), 'bootstrapping.joining.promoting.backingOff'],
      [
        members([
          [0, 'voter'],
          [1, 'nodeLost'],
        ]),
        'observing',
        [],
      ],
      [
        etcd([
          [0, false, true],
          [1, true, true],
        ]),
        'replacing.removing.deletingMember.running',
        [{ type: 'deleteMember', params: { member: 'demo-1' } }],
      ],
    ]);
  });

  it('a seed whose node is lost before it started: the bootstrap waits and says which member and why', () => {
    const d = seeding(3);
    play(d, [
      [ok('createMember'), 'bootstrapping.seeding.awaitingSeed'],
      [members([[0, 'nodeLost']]), 'bootstrapping.seeding.awaitingSeed', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'waiting for the seed member demo-0 to start a new etcd cluster; EtcdMember demo-0: its node is down or gone (nodeLost; kubectl describe etcdmember demo-0 says which)',
    );
  });

  it('does not replace a lost member when removing it would lose quorum', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [1, 2] },
        ),
        'degraded',
      ],
      [
        members([
          [0, 'voter'],
          [1, 'replacing'],
          [2, 'voter'],
        ]),
        'degraded',
        [],
      ],
    ]);
  });

  it('removes an etcd member that no EtcdMember accounts for', () => {
    const d = steadyCluster(3);
    const stray = { id: 'ff', name: '', peerURL: 'http://stray:2380', learner: true };
    const listed: ClusterEvent = {
      type: 'etcd.members.listed',
      at: now(),
      etcd: {
        clusterID: 'c1',
        members: [...(voters(0, 1, 2) as { etcd: EtcdObservation }).etcd.members, stray],
        healthy: [id(0), id(1), id(2)],
      },
    };
    play(d, [
      [
        listed,
        'removingOrphan.removing.running',
        [
          {
            type: 'removeEtcdMember',
            params: {
              peerURL: 'http://stray:2380',
              memberID: 'ff',
              reason: 'no EtcdMember accounts for this etcd member',
            },
          },
        ],
      ],
      [ok('removeEtcdMember'), 'observing'],
      [voters(0, 1, 2), 'steady'],
    ]);
  });

  it("reports another cluster answering at its members' addresses and acts on nothing", () => {
    const d = steadyCluster(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { clusterID: 'other' },
        ),
        'degraded',
        [],
      ],
      [spec(5), 'degraded', []],
    ]);
  });

  it('goes to deleting from any step and asks for nothing more', () => {
    const d = newCluster();
    play(d, [
      [spec(3), 'bootstrapping.seeding.creatingServices.running'],
      [{ type: 'k8s.cluster.deleted', at: now() }, 'deleting', []],
    ]);
    expect(d.snapshot.status).toBe('done');
  });

  it('resumes mid-step after a restart without asking for the same intent again', () => {
    const d = steadyCluster(1);
    play(d, [
      [spec(2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'scalingUp.joining.addingLearner.running', [addLearner(1)]],
    ]);
    d.restart();
    expect(d.state).toBe('scalingUp.joining.addingLearner.running');
    // The journal's open intent is recovered by the runtime; its outcome moves the step on.
    play(d, [
      [voters(0), 'scalingUp.joining.addingLearner.running', []],
      [
        ok('addLearner', { memberID: id(1), initialCluster: joinedAfter([0, 1]) }),
        'scalingUp.joining.creatingMember.running',
        [createJoiner(1, joinedAfter([0, 1]))],
      ],
    ]);
    expect(d.context.nextOrdinal).toBe(2);
  });
});

describe('cluster machine: the PodDisruptionBudget', () => {
  it.each([
    [1, 1, 'minAvailable 1: with 1 member, no eviction may stop one without losing quorum'],
    [3, 2, 'minAvailable 2 of 3 members: evictions (a node drain) stop one member at a time'],
    [5, 4, 'minAvailable 4 of 5 members: evictions (a node drain) stop one member at a time'],
  ])('a cluster of %i, once bootstrapped, gets a budget of minAvailable %i', (n, min, says) => {
    const d = bootstrapped(n);
    play(d, [[voters(...range(n)), 'updatingBudget.running', [budget(min)]]]);
    expect(describeCluster(d.state, d.context)).toEqual({
      step: 'UpdatingBudget',
      message: `setting PodDisruptionBudget demo to ${says}`,
    });
    play(d, [[budgetSet(min), 'steady', []]]);
    expect(d.context.disruptionBudget).toBe(min);
    // Set once: further probes of a steady cluster ask for nothing.
    play(d, [[voters(...range(n)), 'steady', []]]);
  });

  it('scaling 3 -> 5 raises it before the first learner joins; 5 -> 1 lowers it after each member left', () => {
    const d = steadyCluster(3);
    // Up: minAvailable 4 from the start, so at 4 voters (quorum 3) an eviction still leaves 3.
    play(d, [
      [spec(5), 'updatingBudget.running', [budget(4)]],
      [budgetSet(4), 'scalingUp.joining.addingLearner.running', [addLearner(3)]],
    ]);
    join(d, 3, [0, 1, 2], 'scalingUp.joining');
    play(d, [[voters(0, 1, 2, 3), 'scalingUp.joining.addingLearner.running', [addLearner(4)]]]);
    join(d, 4, [0, 1, 2, 3], 'scalingUp.joining');
    play(d, [
      [votingMembers(5), 'observing', []],
      [voters(0, 1, 2, 3, 4), 'steady', []],
    ]);
    // Down: lowered only once a member has left, to what the voters left can spare (none at 2).
    const leave = (n: number): Step<typeof clusterMachine>[] => [
      [ok('deleteMember'), 'scalingDown.removing.awaitingRemoval', []],
      [voters(...range(n)), 'scalingDown.removing.awaitingRemoval', []],
      [votingMembers(n), 'observing', []],
    ];
    const remove = (n: number): Intent => ({ type: 'deleteMember', params: { member: `demo-${n}` } });
    play(d, [
      [spec(1), 'scalingDown.removing.deletingMember.running', [remove(4)]],
      ...leave(4),
      [voters(0, 1, 2, 3), 'updatingBudget.running', [budget(3)]],
      [budgetSet(3), 'scalingDown.removing.deletingMember.running', [remove(3)]],
      ...leave(3),
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'scalingDown.removing.deletingMember.running', [remove(2)]],
      ...leave(2),
      [voters(0, 1), 'scalingDown.removing.deletingMember.running', [remove(1)]],
      ...leave(1),
      [voters(0), 'updatingBudget.running', [budget(1)]],
      [budgetSet(1), 'steady', []],
    ]);
  });

  it('parking deletes it once the members are parked; waking sets it again', () => {
    const d = steadyCluster(3);
    const parked = members(range(3).map((n) => [n, 'dormant', { dormant: true }]));
    play(d, [
      [spec(0), 'parking.parkingMembers.running'],
      [ok('setDormant'), 'parking.awaitingPark', []],
      [parked, 'updatingBudget.running', [budget(null)]],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'deleting PodDisruptionBudget demo: a cluster scaled to zero has no Pods to protect',
    );
    play(d, [
      [budgetSet(null), 'dormant', []],
      [spec(3), 'waking.wakingMembers.running'],
      [ok('setDormant'), 'waking.awaitingWake', []],
      [votingMembers(3), 'observing', []],
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'steady', []],
    ]);
  });

  it('a failed update backs off and is tried again; one trying again cannot fix fails the cluster', () => {
    const d = bootstrapped(3);
    play(d, [
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [failed('setDisruptionBudget', 'ERR_SET_DISRUPTION_BUDGET'), 'updatingBudget.backingOff', []],
      [tick(1000), 'updatingBudget.running', [budget(2)]],
    ]);
    const foreign: ClusterEvent = {
      type: 'effect.setDisruptionBudget.failed',
      at: now(),
      error: { code: 'ERR_SET_DISRUPTION_BUDGET_FOREIGN', message: 'not ours', retryable: false },
    };
    play(d, [[foreign, 'failed', []]]);
  });

  it('a journal from before budgets (no budget recorded) sets it once on its next probe', () => {
    const d = steadyCluster(3);
    const { disruptionBudget: _, ...before } = d.context;
    d.snapshot = clusterMachine.resolveState({ value: 'steady', context: before });
    play(d, [
      [voters(0, 1, 2), 'updatingBudget.running', [budget(2)]],
      [budgetSet(2), 'steady', []],
    ]);
  });
});

describe('cluster machine: what a user reads', () => {
  it('names the step and says what it waits for', () => {
    const d = steadyCluster(1);
    play(d, [
      [spec(2), 'updatingBudget.running'],
      [budgetSet(2), 'scalingUp.joining.addingLearner.running'],
    ]);
    expect(describeCluster(d.state, d.context)).toEqual({
      step: 'ScalingUp',
      message: 'adding demo-1 to etcd as a learner (1 of 2 voters)',
    });
    play(d, [[failed('addLearner', 'ERR_UNAVAILABLE'), 'scalingUp.joining.addingLearner.backingOff']]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'adding demo-1 to etcd as a learner (1 of 2 voters); the last try failed (ERR_UNAVAILABLE: ERR_UNAVAILABLE) and is retried with back-off',
    );
  });

  it("etcd's hold after a promotion reads as a wait for it, not a failure, until the fast tries run out", () => {
    const d = steadyCluster(1);
    play(d, [
      [spec(2), 'updatingBudget.running'],
      [budgetSet(2), 'scalingUp.joining.addingLearner.running'],
      [failed('addLearner', 'ERR_ETCD_UNHEALTHY'), 'scalingUp.joining.addingLearner.backingOff'],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'adding demo-1 to etcd as a learner (1 of 2 voters); waiting for etcd to allow the next membership change, which it holds until its members have been connected for 5 s',
    );
    // 20 tries at 500 ms are twice etcd's hold: still refused after them is trouble.
    for (let i = 2; i <= 21; i++)
      play(d, [
        [tick(30_000), 'scalingUp.joining.addingLearner.running'],
        [failed('addLearner', 'ERR_ETCD_UNHEALTHY'), 'scalingUp.joining.addingLearner.backingOff'],
      ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'adding demo-1 to etcd as a learner (1 of 2 voters); the last try failed (ERR_ETCD_UNHEALTHY: ERR_ETCD_UNHEALTHY) and is retried with back-off',
    );
  });

  it('shows the leader etcd names, and how far a learner has caught up before its promotion', () => {
    const d = steadyCluster(1);
    const withLeader = (
      e: ClusterEvent,
      learners?: Record<string, { applied: number; leader: number }>,
    ): ClusterEvent =>
      e.type === 'etcd.members.listed'
        ? { ...e, etcd: { ...e.etcd, leader: id(0), ...(learners ? { learners } : {}) } }
        : e;
    play(d, [[withLeader(voters(0)), 'steady']]);
    expect(describeCluster(d.state, d.context).message).toBe('one voter, healthy; leader demo-0');
    play(d, [
      [spec(2), 'updatingBudget.running'],
      [budgetSet(2), 'scalingUp.joining.addingLearner.running'],
      [
        ok('addLearner', { memberID: id(1), initialCluster: joinedAfter([0, 1]) }),
        'scalingUp.joining.creatingMember.running',
      ],
      [ok('createMember'), 'scalingUp.joining.awaitingStart'],
      [
        withLeader(
          etcd([
            [0, false, true],
            [1, true, true],
          ]),
          { [id(1)]: { applied: 40, leader: 120 } },
        ),
        'scalingUp.joining.promoting.running',
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      "promoting learner demo-1 once it is in sync with the leader (applied index 40 of the leader's 120) (1 of 2 voters)",
    );
  });

  it('says why a cluster is degraded', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [1, 2] },
        ),
        'degraded',
      ],
    ]);
    expect(describeCluster(d.state, d.context)).toEqual({
      step: 'Degraded',
      message: '1 of 3 voters healthy; not answering: demo-1, demo-2: waiting for a healthy quorum before any change',
    });
    // Nothing progresses while it waits: Progressing is False (the step is at rest), Degraded True.
    expect(pathHasTag(clusterMachine, d.state, TAG.resting)).toBe(true);
    play(d, [[{ type: 'etcd.unreachable', at: now(), error: 'no member answered' }, 'degraded']]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'etcd does not answer: no member answered; not answering: demo-0, demo-1, demo-2',
    );
  });

  it('a steady cluster with a voter down says so', () => {
    const d = steadyCluster(3);
    play(d, [
      [
        etcd(
          [
            [0, false, true],
            [1, false, true],
            [2, false, true],
          ],
          { unhealthy: [2] },
        ),
        'steady',
      ],
    ]);
    expect(describeCluster(d.state, d.context)).toEqual({ step: 'Steady', message: '3 voters, 2 healthy: a quorum' });
  });
});

describe('retry policy', () => {
  it('retries etcd\'s "not yet" every 500 ms for 20 tries, then backs off like any failure', () => {
    expect(retryDelay(1, 'ERR_ETCD_UNHEALTHY')).toBe(500);
    expect(retryDelay(20, 'ERR_LEARNER_NOT_IN_SYNC')).toBe(500);
    expect(retryDelay(21, 'ERR_ETCD_UNHEALTHY')).toBe(1000);
    expect(retryDelay(22, 'ERR_ETCD_UNHEALTHY')).toBe(2000);
    expect([1, 2, 3, 10].map((n) => retryDelay(n, 'ERR_CREATE_POD'))).toEqual([1000, 2000, 4000, 30_000]);
    expect(retryDelay(1, undefined)).toBe(1000);
  });

  it('an etcd "not yet" is an expected wait for as long as it is retried fast; any other failure is trouble', () => {
    const after = (attempts: number, code: string | null) => ({
      attempts,
      lastError: code === null ? null : { code },
    });
    expect(troubled(after(0, null))).toBe(false);
    expect(troubled(after(1, 'ERR_ETCD_UNHEALTHY'))).toBe(false);
    expect(troubled(after(20, 'ERR_LEARNER_NOT_IN_SYNC'))).toBe(false);
    expect(troubled(after(21, 'ERR_ETCD_UNHEALTHY'))).toBe(true);
    expect(troubled(after(1, 'ERR_ETCD_UNAVAILABLE'))).toBe(true);
    expect(troubled(after(1, 'ERR_TOO_MANY_LEARNERS'))).toBe(true);
  });
});

describe('cluster machine: rolling upgrades', () => {
  /** etcd with voters 0..n-1 at these versions; the unhealthy ones do not answer (so report none). */
  const etcdAt = (
    versions: readonly string[],
    leader: number,
    o: { unhealthy?: number[]; behind?: number[] } = {},
  ): ClusterEvent => {
    const up = range(versions.length).filter((n) => !o.unhealthy?.includes(n));
    return {
      type: 'etcd.members.listed',
      at: now(),
      etcd: {
        clusterID: 'c1',
        members: range(versions.length).map((n) => ({ id: id(n), name: `demo-${n}`, peerURL: url(n), learner: false })),
        healthy: up.map(id),
        leader: id(leader),
        versions: Object.fromEntries(up.map((n) => [id(n), versions[n]!])),
        ...(o.behind ? { behind: o.behind.map(id) } : {}),
      },
    };
  };
  const listed = (versions: readonly string[], states: Record<number, MemberState> = {}): ClusterEvent =>
    members(
      versions.map((v, n): [number, MemberState, Partial<MemberObservation>] => [
        n,
        states[n] ?? 'voter',
        { version: v },
      ]),
    );
  const setVersion = (n: number, version = '3.6.16'): Intent => ({
    type: 'setMemberVersion',
    params: { member: `demo-${n}`, version },
  });
  const OLD = '3.5.35';
  const NEW = '3.6.16';

  /** A steady 3-member cluster on 3.5.35 led by demo-0. */
  function onOld(): Driver<typeof clusterMachine> {
    const d = steadyCluster(3);
    play(d, [
      [spec(3, OLD), 'steady'],
      [listed([OLD, OLD, OLD]), 'steady'],
      [etcdAt([OLD, OLD, OLD], 0), 'steady'],
    ]);
    return d;
  }

  /** demo-2 then demo-0 (the leader, last) upgraded, once demo-1 is and demo-2's version is set. */
  const lastTwo = (): Step<typeof clusterMachine>[] => [
    [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
    [listed([OLD, NEW, NEW]), 'upgrading.awaitingMember', []],
    [etcdAt([OLD, NEW, NEW], 0), 'observing', []],
    // The leader last: leadership moves first, to a member already on the new version.
    [
      etcdAt([OLD, NEW, NEW], 0),
      'upgrading.movingLeader.running',
      [{ type: 'moveLeader', params: { member: 'demo-0', memberID: id(0), toID: id(1) } }],
    ],
    [ok('moveLeader', { leader: id(1) }), 'upgrading.awaitingLeader', []],
    [etcdAt([OLD, NEW, NEW], 1), 'upgrading.settingVersion.running', [setVersion(0)]],
    [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
    [listed([NEW, NEW, NEW]), 'upgrading.awaitingMember', []],
    [etcdAt([NEW, NEW, NEW], 1), 'observing', []],
  ];

  it('upgrades one member at a time, followers first, each back healthy, on the new version and in sync before the next', () => {
    const d = onOld();
    play(d, [[spec(3, NEW), 'upgrading.settingVersion.running', [setVersion(1)]]]);
    expect(describeCluster(d.state, d.context)).toEqual({
      step: 'Upgrading',
      message:
        "upgrading demo-1 (1 of 3) from 3.5.35 to 3.6.16 (no snapshot first: spec.upgrade.snapshot is not set): setting the EtcdMember's version",
    });
    play(d, [
      [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
      // Its Pod stops: etcd does not answer from it, its member machine restarts it.
      [listed([OLD, NEW, OLD], { 1: 'upgrading' }), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, NEW, OLD], 0, { unhealthy: [1] }), 'upgrading.awaitingMember', []],
      // Back and answering on 3.6.16, but still replaying the log: not yet.
      [listed([OLD, NEW, OLD]), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, NEW, OLD], 0, { behind: [1] }), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, NEW, OLD], 0), 'observing', []],
      [etcdAt([OLD, NEW, OLD], 0), 'upgrading.settingVersion.running', [setVersion(2)]],
    ]);
    expect(d.context.upgrade).toMatchObject({ member: 'demo-2', position: 2, total: 3 });
    play(d, [...lastTwo(), [etcdAt([NEW, NEW, NEW], 1), 'steady', []]]);
  });

  it('onto 3.7 from 3.6, flushes every raft log to a snapshot on disk once, before the first member restarts', () => {
    const [V36, V37] = ['3.6.16', '3.7.3'];
    const d = steadyCluster(3);
    play(d, [
      [spec(3, V36, { snapshotCount: 500 }), 'steady'],
      [listed([V36, V36, V36]), 'steady'],
      [etcdAt([V36, V36, V36], 0), 'steady'],
      [
        spec(3, V37, { snapshotCount: 500 }),
        'upgrading.flushingLog.running',
        [{ type: 'flushRaftLog', params: { entries: 501, version: V37 } }],
      ],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'upgrading demo-1 (1 of 3) from 3.6.16 to 3.7.3 (no snapshot first: spec.upgrade.snapshot is not set): ' +
        'committing 501 empty entries so that every member writes its raft log to a snapshot on disk first ' +
        '(etcd 3.7.3 cannot replay entries etcd 3.5 wrote)',
    );
    play(d, [
      [ok('flushRaftLog', { entries: 501 }), 'upgrading.settingVersion.running', [setVersion(1, V37)]],
      [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
      [listed([V36, V37, V36]), 'upgrading.awaitingMember', []],
      [etcdAt([V36, V37, V36], 0), 'observing', []],
      // Not again for the next member.
      [etcdAt([V36, V37, V36], 0), 'upgrading.settingVersion.running', [setVersion(2, V37)]],
    ]);
  });

  it('a scale asked in the middle of a roll waits for the roll to finish; then the members it adds join a cluster all on the new version', () => {
    const d = onOld();
    play(d, [
      [spec(3, NEW), 'upgrading.settingVersion.running', [setVersion(1)]],
      [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
      // replicas 3 -> 5 while demo-1 restarts on 3.6.16.
      [spec(5, NEW), 'upgrading.awaitingMember', []],
      [listed([OLD, NEW, OLD]), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, NEW, OLD], 0), 'observing', []],
      // The roll goes on: no budget for 5, no learner while two members run 3.5.35.
      [etcdAt([OLD, NEW, OLD], 0), 'upgrading.settingVersion.running', [setVersion(2)]],
    ]);
    expect(d.context.target).toMatchObject({ replicas: 3, version: NEW });
    expect(describeCluster(d.state, d.context).message).toBe(
      "upgrading demo-2 (2 of 3) from 3.5.35 to 3.6.16: setting the EtcdMember's version; then the new spec is taken: 5 voters (was 3)",
    );
    play(d, [
      ...lastTwo(),
      // The roll is done: only now is 5 latched, the budget raised for it and the first learner added.
      [etcdAt([NEW, NEW, NEW], 1), 'updatingBudget.running', [budget(4)]],
      [budgetSet(4), 'scalingUp.joining.addingLearner.running', [addLearner(3)]],
    ]);
    expect(d.context.target).toMatchObject({ replicas: 5, version: NEW });
  });

  it('takes no member down while another voter is down or behind', () => {
    const d = onOld();
    play(d, [
      [etcdAt([OLD, OLD, OLD], 0, { unhealthy: [2] }), 'steady'],
      [spec(3, NEW), 'upgrading.awaitingHealth', []],
      [etcdAt([OLD, OLD, OLD], 0, { behind: [2] }), 'upgrading.awaitingHealth', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'upgrading demo-1 (1 of 3) from 3.5.35 to 3.6.16 (no snapshot first: spec.upgrade.snapshot is not set): waiting until every voter is healthy and in sync before its Pod stops',
    );
    play(d, [[etcdAt([OLD, OLD, OLD], 0), 'upgrading.settingVersion.running', [setVersion(1)]]]);
  });

  it('a member that does not come back holds the roll; past the deadline a new spec (back to the old version) is taken', () => {
    const d = onOld();
    play(d, [
      [spec(3, '3.6.99'), 'upgrading.settingVersion.running', [setVersion(1, '3.6.99')]],
      [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
      [listed([OLD, '3.6.99', OLD], { 1: 'upgrading' }), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, OLD, OLD], 0, { unhealthy: [1] }), 'upgrading.awaitingMember', []],
      // The user goes back to the version every other member runs: it waits for the deadline.
      [spec(3, OLD), 'upgrading.awaitingMember', []],
      [tick(590_000), 'upgrading.awaitingMember', []],
      [tick(20_000), 'observing', []],
      // Then the stuck member is the one to restart, although it is not healthy itself. It is set
      // to a newer minor: etcd's cluster version is checked first (never raised: nothing to enable).
      [
        etcdAt([OLD, OLD, OLD], 0, { unhealthy: [1] }),
        'upgrading.enablingDowngrade.running',
        [{ type: 'enableDowngrade', params: { version: OLD } }],
      ],
      [ok('enableDowngrade', { enabled: false }), 'upgrading.settingVersion.running', [setVersion(1, OLD)]],
      [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
      [listed([OLD, OLD, OLD]), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, OLD, OLD], 0), 'observing', []],
      [etcdAt([OLD, OLD, OLD], 0), 'steady', []],
    ]);
  });

  describe('down a minor (etcd downgrade)', () => {
    const enable = (version: string): Intent => ({ type: 'enableDowngrade', params: { version } });
    const cancel = (version: string): Intent => ({ type: 'cancelDowngrade', params: { version } });
    /** A steady 3-member cluster on 3.6.16 led by demo-0. */
    function onNew(): Driver<typeof clusterMachine> {
      const d = steadyCluster(3);
      play(d, [
        [spec(3, NEW), 'steady'],
        [listed([NEW, NEW, NEW]), 'steady'],
        [etcdAt([NEW, NEW, NEW], 0), 'steady'],
      ]);
      return d;
    }

    it('enables etcd downgrade once before the first member restarts, then rolls members down one at a time, the leader last', () => {
      const d = onNew();
      play(d, [[spec(3, OLD), 'upgrading.enablingDowngrade.running', [enable(OLD)]]]);
      // The step (the Step column, Progressing's reason) says which way the roll goes.
      expect(describeCluster(d.state, d.context)).toEqual({
        step: 'Downgrading',
        message:
          'downgrading demo-1 (1 of 3) from 3.6.16 to 3.5.35 (no snapshot first: spec.upgrade.snapshot is not set): ' +
          "enabling etcd's downgrade to 3.5 and waiting until every member reports cluster version 3.5 and storage version 3.5 or older, before any member restarts on it",
      });
      play(d, [
        [ok('enableDowngrade', { enabled: true }), 'upgrading.settingVersion.running', [setVersion(1, OLD)]],
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [listed([NEW, OLD, NEW], { 1: 'upgrading' }), 'upgrading.awaitingMember', []],
        [etcdAt([NEW, NEW, NEW], 0, { unhealthy: [1] }), 'upgrading.awaitingMember', []],
        [listed([NEW, OLD, NEW]), 'upgrading.awaitingMember', []],
        [etcdAt([NEW, OLD, NEW], 0), 'observing', []],
        // Not asked again for the next member.
        [etcdAt([NEW, OLD, NEW], 0), 'upgrading.settingVersion.running', [setVersion(2, OLD)]],
      ]);
      expect(describeCluster(d.state, d.context)).toEqual({
        step: 'Downgrading',
        message: "downgrading demo-2 (2 of 3) from 3.6.16 to 3.5.35: setting the EtcdMember's version",
      });
      play(d, [
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [listed([NEW, OLD, OLD]), 'upgrading.awaitingMember', []],
        [etcdAt([NEW, OLD, OLD], 0), 'observing', []],
        [
          etcdAt([NEW, OLD, OLD], 0),
          'upgrading.movingLeader.running',
          [{ type: 'moveLeader', params: { member: 'demo-0', memberID: id(0), toID: id(1) } }],
        ],
        [ok('moveLeader', { leader: id(1) }), 'upgrading.awaitingLeader', []],
        [etcdAt([NEW, OLD, OLD], 1), 'upgrading.settingVersion.running', [setVersion(0, OLD)]],
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [listed([OLD, OLD, OLD]), 'upgrading.awaitingMember', []],
        [etcdAt([OLD, OLD, OLD], 1), 'observing', []],
        [etcdAt([OLD, OLD, OLD], 1), 'steady', []],
      ]);
      expect(d.context.downgradeTo).toBe('3.5');
    });

    it('a refusal from etcd is retried with back-off and says why; at the next failure a new spec is taken, the downgrade cancelled first', () => {
      const d = onNew();
      play(d, [
        [spec(3, OLD), 'upgrading.enablingDowngrade.running', [enable(OLD)]],
        [
          failed(
            'enableDowngrade',
            'ERR_DOWNGRADE_REFUSED',
            "etcd's cluster version is 3.7: its downgrade goes to the minor below the cluster version only, and 3.5 is not",
          ),
          'upgrading.enablingDowngrade.backingOff',
          [],
        ],
      ]);
      expect(describeCluster(d.state, d.context).message).toContain(
        "the last try failed (ERR_DOWNGRADE_REFUSED: etcd's cluster version is 3.7",
      );
      play(d, [
        [spec(3, NEW), 'upgrading.enablingDowngrade.backingOff', []],
        [tick(60_000), 'upgrading.enablingDowngrade.running', [enable(OLD)]],
        // etcd may hold the downgrade enabled (a member down when asked): cancelled before the new spec.
        [
          failed('enableDowngrade', 'ERR_ENABLE_DOWNGRADE', 'not down yet'),
          'upgrading.abandoningDowngrade.running',
          [cancel(NEW)],
        ],
      ]);
      expect(describeCluster(d.state, d.context)).toMatchObject({
        step: 'Downgrading',
        message: expect.stringContaining(
          "the spec changed before etcd's cluster version came down: cancelling etcd's downgrade to 3.5 first",
        ) as string,
      });
      play(d, [
        [ok('cancelDowngrade', { cancelled: true }), 'observing', []],
        [etcdAt([NEW, NEW, NEW], 0), 'steady', []],
      ]);
      expect(d.context.target?.version).toBe(NEW);
      expect(d.context.downgradeTo ?? null).toBeNull();
    });

    it('undone after its first member (spec back up): cancels etcd downgrade first, then rolls that member back up', () => {
      const d = onNew();
      play(d, [
        [spec(3, OLD), 'upgrading.enablingDowngrade.running', [enable(OLD)]],
        [ok('enableDowngrade', { enabled: true }), 'upgrading.settingVersion.running', [setVersion(1, OLD)]],
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [listed([NEW, OLD, NEW]), 'upgrading.awaitingMember', []],
        [etcdAt([NEW, OLD, NEW], 0), 'observing', []],
        [spec(3, NEW), 'observing', []],
        [etcdAt([NEW, OLD, NEW], 0), 'upgrading.cancellingDowngrade.running', [cancel(NEW)]],
      ]);
      // Back up: an upgrade again, from the cancel on.
      expect(describeCluster(d.state, d.context)).toEqual({
        step: 'Upgrading',
        message:
          "upgrading demo-1 (3 of 3) from 3.5.35 to 3.6.16: cancelling etcd's downgrade to 3.5 first, so that the cluster version follows the members up again",
      });
      play(d, [
        [ok('cancelDowngrade', { cancelled: true }), 'upgrading.settingVersion.running', [setVersion(1, NEW)]],
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [listed([NEW, NEW, NEW]), 'upgrading.awaitingMember', []],
        [etcdAt([NEW, NEW, NEW], 0), 'observing', []],
        [etcdAt([NEW, NEW, NEW], 0), 'steady', []],
      ]);
      expect(d.context.downgradeTo).toBeNull();
    });

    it('with spec.upgrade.snapshot, says it takes the snapshot for a downgrade', () => {
      const d = onNew();
      play(d, [
        [
          {
            type: 'k8s.cluster.updated',
            at: now(),
            spec: { replicas: 3, version: OLD },
            progressDeadlineSeconds: 600,
            upgradeSnapshot: true,
          },
          'upgrading.snapshotting.creating.running',
          [
            {
              type: 'createUpgradeSnapshot',
              params: { cluster: 'demo', name: 'demo-pre-v3-5-35', version: OLD },
            },
          ],
        ],
      ]);
      expect(describeCluster(d.state, d.context)).toEqual({
        step: 'Downgrading',
        message: 'downgrading to 3.5.35: taking EtcdSnapshot demo-pre-v3-5-35 before any member restarts',
      });
    });
  });

  it('scales before it upgrades, and the members it adds start on the new version', () => {
    const d = onOld();
    play(d, [
      [spec(4, NEW), 'updatingBudget.running', [budget(3)]],
      [budgetSet(3), 'scalingUp.joining.addingLearner.running', [addLearner(3)]],
    ]);
    const ic = joinedAfter([0, 1, 2, 3]);
    play(d, [
      [
        ok('addLearner', { memberID: id(3), initialCluster: ic }),
        'scalingUp.joining.creatingMember.running',
        [createJoiner(3, ic)],
      ],
    ]);
  });

  describe('a CA change in the Secrets', () => {
    /** The spec at 3 members on OLD, with the CA digest the manager read from the Secrets. */
    const trusting = (trust: string | undefined, o: { upgradeSnapshot?: boolean } = {}): ClusterEvent => ({
      type: 'k8s.cluster.updated',
      at: now(),
      spec: { replicas: 3, version: OLD, ...(trust !== undefined ? { trust } : {}) },
      progressDeadlineSeconds: 600,
      ...(o.upgradeSnapshot ? { upgradeSnapshot: true } : {}),
    });
    /** EtcdMembers 0..2 on OLD: each one's spec.trust, and the trust its Pod was made with. */
    const trusts = (specs: readonly string[], pods: readonly string[] = specs): ClusterEvent =>
      members(
        specs.map((t, n): [number, MemberState, Partial<MemberObservation>] => [
          n,
          'voter',
          { version: OLD, trust: t, podTrust: pods[n]! },
        ]),
      );
    const setTrust = (n: number, trust: string): Intent => ({
      type: 'setMemberVersion',
      params: { member: `demo-${n}`, version: OLD, trust },
    });
    function trustingA(o: { upgradeSnapshot?: boolean } = {}): Driver<typeof clusterMachine> {
      const d = steadyCluster(3);
      play(d, [
        [trusting('a', o), 'steady'],
        [trusts(['a', 'a', 'a']), 'steady'],
        [etcdAt([OLD, OLD, OLD], 0), 'steady'],
      ]);
      return d;
    }

    it('restarts one member at a time onto the new CAs, each only done once its new Pod started with them', () => {
      const d = trustingA();
      play(d, [[trusting('b'), 'upgrading.settingVersion.running', [setTrust(1, 'b')]]]);
      // The step says what runs: no version moves, so it is no upgrade.
      expect(describeCluster(d.state, d.context)).toEqual({
        step: 'RollingCA',
        message:
          "restarting demo-1 (1 of 3) to trust the CA certificates now in the cluster's Secrets (ca.crt changed): setting the EtcdMember's spec.trust",
      });
      play(d, [
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        // Its EtcdMember names the new digest, but its Pod still runs with the old CAs: not done,
        // however healthy etcd says it is.
        [trusts(['a', 'b', 'a'], ['a', 'a', 'a']), 'upgrading.awaitingMember', []],
        [etcdAt([OLD, OLD, OLD], 0), 'upgrading.awaitingMember', []],
        // Its Pod stops; the new one, made with the new digest, is not answering yet.
        [etcdAt([OLD, OLD, OLD], 0, { unhealthy: [1] }), 'upgrading.awaitingMember', []],
        [trusts(['a', 'b', 'a']), 'upgrading.awaitingMember', []],
      ]);
      expect(describeCluster(d.state, d.context).step).toBe('RollingCA');
      play(d, [
        [etcdAt([OLD, OLD, OLD], 0, { behind: [1] }), 'upgrading.awaitingMember', []],
        [etcdAt([OLD, OLD, OLD], 0), 'observing', []],
        [etcdAt([OLD, OLD, OLD], 0), 'upgrading.settingVersion.running', [setTrust(2, 'b')]],
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [trusts(['a', 'b', 'b']), 'observing', []],
        [
          etcdAt([OLD, OLD, OLD], 0),
          'upgrading.movingLeader.running',
          [{ type: 'moveLeader', params: { member: 'demo-0', memberID: id(0), toID: id(1) } }],
        ],
        [ok('moveLeader', { leader: id(1) }), 'upgrading.awaitingLeader', []],
        [etcdAt([OLD, OLD, OLD], 1), 'upgrading.settingVersion.running', [setTrust(0, 'b')]],
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [trusts(['b', 'b', 'b']), 'observing', []],
        [etcdAt([OLD, OLD, OLD], 1), 'steady', []],
      ]);
    });

    it('a digest not known (a Secret away, or not read yet) keeps the one it had: nothing restarts', () => {
      const d = trustingA();
      play(d, [[trusting(undefined), 'steady', []]]);
      expect(d.context.target?.trust).toBe('a');
    });

    it('takes no snapshot first (spec.upgrade.snapshot is for new versions), and a new version with new CAs restarts each member once', () => {
      const d = trustingA({ upgradeSnapshot: true });
      play(d, [[trusting('b', { upgradeSnapshot: true }), 'upgrading.settingVersion.running', [setTrust(1, 'b')]]]);
      const both: ClusterEvent = {
        type: 'k8s.cluster.updated',
        at: now(),
        spec: { replicas: 3, version: NEW, trust: 'c' },
        progressDeadlineSeconds: 600,
      };
      play(d, [
        [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
        [trusts(['a', 'b', 'a']), 'observing', []],
        [both, 'observing', []],
        [
          etcdAt([OLD, OLD, OLD], 0),
          'upgrading.settingVersion.running',
          [{ type: 'setMemberVersion', params: { member: 'demo-1', version: NEW, trust: 'c' } }],
        ],
      ]);
      expect(describeCluster(d.state, d.context)).toEqual({
        step: 'Upgrading',
        message:
          "upgrading demo-1 (1 of 3) from 3.5.35 to 3.6.16, trusting the CA certificates now in its Secrets (no snapshot first: spec.upgrade.snapshot is not set): setting the EtcdMember's version",
      });
    });

    it('CAs changed while parked: waking sets the new digest in the same patch, and no roll follows', () => {
      const d = trustingA();
      const all = ['demo-0', 'demo-1', 'demo-2'];
      const parked = (trust: string): ClusterEvent =>
        members(range(3).map((n) => [n, 'dormant', { dormant: true, version: OLD, trust, podTrust: trust }]));
      play(d, [
        [
          { ...trusting('a'), spec: { replicas: 0, version: OLD, trust: 'a' } } as ClusterEvent,
          'parking.parkingMembers.running',
          [{ type: 'setDormant', params: { members: all, dormant: true } }],
        ],
        [ok('setDormant'), 'parking.awaitingPark', []],
        [parked('a'), 'updatingBudget.running', [budget(null)]],
        [budgetSet(null), 'dormant', []],
        // The CAs change while nothing runs: nothing to restart.
        [{ ...trusting('b'), spec: { replicas: 0, version: OLD, trust: 'b' } } as ClusterEvent, 'dormant', []],
        [
          trusting('b'),
          'waking.wakingMembers.running',
          [{ type: 'setDormant', params: { members: all, dormant: false, trust: 'b' } }],
        ],
        [ok('setDormant'), 'waking.awaitingWake', []],
        [trusts(['b', 'b', 'b']), 'observing', []],
        [etcdAt([OLD, OLD, OLD], 0), 'updatingBudget.running', [budget(2)]],
        [budgetSet(2), 'steady', []],
      ]);
    });

    it('the members it adds start with the CAs of the digest it knows', () => {
      const d = trustingA();
      play(d, [
        [
          { ...trusting('a'), spec: { replicas: 4, version: OLD, trust: 'a' } } as ClusterEvent,
          'updatingBudget.running',
          [budget(3)],
        ],
        [budgetSet(3), 'scalingUp.joining.addingLearner.running'],
      ]);
      const ic = joinedAfter([0, 1, 2, 3]);
      play(d, [
        [
          ok('addLearner', { memberID: id(3), initialCluster: ic }),
          'scalingUp.joining.creatingMember.running',
          [
            {
              type: 'createMember',
              params: { member: 'demo-3', ordinal: 3, bootstrap: false, initialCluster: ic, version: OLD, trust: 'a' },
            },
          ],
        ],
      ]);
    });
  });

  const withSnapshot = (version: string): ClusterEvent => ({
    type: 'k8s.cluster.updated',
    at: now(),
    spec: { replicas: 3, version },
    progressDeadlineSeconds: 600,
    upgradeSnapshot: true,
  });
  const snapshots = (phase: string | null, message?: string): ClusterEvent => ({
    type: 'k8s.upgradeSnapshots.listed',
    at: now(),
    snapshots:
      phase === null ? [] : [{ name: 'demo-pre-v3-6-16', version: NEW, phase, ...(message ? { message } : {}) }],
  });
  const takeSnapshot: Intent = {
    type: 'createUpgradeSnapshot',
    params: { cluster: 'demo', name: 'demo-pre-v3-6-16', version: NEW },
  };

  it('with spec.upgrade.snapshot, takes an EtcdSnapshot first and restarts no member before it succeeded', () => {
    const d = onOld();
    play(d, [
      [withSnapshot(NEW), 'upgrading.snapshotting.creating.running', [takeSnapshot]],
      [ok('createUpgradeSnapshot', { uid: 's1' }), 'upgrading.snapshotting.awaiting', []],
      [snapshots('Running'), 'upgrading.snapshotting.awaiting', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toBe(
      'upgrading to 3.6.16: waiting for EtcdSnapshot demo-pre-v3-6-16 (Running) before any member restarts',
    );
    play(d, [
      [snapshots('Succeeded'), 'upgrading.settingVersion.running', [setVersion(1)]],
      [ok('setMemberVersion'), 'upgrading.awaitingMember', []],
      [listed([OLD, NEW, OLD]), 'upgrading.awaitingMember', []],
      [etcdAt([OLD, NEW, OLD], 0), 'observing', []],
      // The next member does not take another snapshot.
      [etcdAt([OLD, NEW, OLD], 0), 'upgrading.settingVersion.running', [setVersion(2)]],
    ]);
  });

  it('a failed snapshot holds the roll, says what to do, and is taken again once deleted; going back ends the roll', () => {
    const d = onOld();
    play(d, [
      [withSnapshot(NEW), 'upgrading.snapshotting.creating.running', [takeSnapshot]],
      [ok('createUpgradeSnapshot', { uid: 's1' }), 'upgrading.snapshotting.awaiting', []],
      [snapshots('Failed', 'bucket backups does not exist'), 'upgrading.snapshotting.awaiting', []],
      [tick(3_600_000), 'upgrading.snapshotting.awaiting', []],
    ]);
    expect(describeCluster(d.state, d.context).message).toMatch(
      /^upgrading to 3\.6\.16: EtcdSnapshot demo-pre-v3-6-16, taken before any member restarts, failed \(bucket backups does not exist\); no member was restarted\. Fix its destination and delete it/,
    );
    play(d, [
      [snapshots(null), 'upgrading.snapshotting.creating.running', [takeSnapshot]],
      [ok('createUpgradeSnapshot', { uid: 's2' }), 'upgrading.snapshotting.awaiting', []],
      [snapshots('Failed', 'again'), 'upgrading.snapshotting.awaiting', []],
      [withSnapshot(OLD), 'observing', []],
      [etcdAt([OLD, OLD, OLD], 0), 'steady', []],
    ]);
    expect(d.context.members.every((m) => m.version === OLD)).toBe(true);
  });
});

describe('the snapshot a roll takes first', () => {
  it('is named after the cluster and version, within the 54 characters an EtcdSnapshot may have', () => {
    expect(preUpgradeSnapshotName('demo', '3.6.16')).toBe('demo-pre-v3-6-16');
    const long = 'a'.repeat(50);
    const other = `${'a'.repeat(49)}b`;
    for (const name of [long, other]) {
      expect(preUpgradeSnapshotName(name, '3.6.16')).toHaveLength(54);
      expect(preUpgradeSnapshotName(name, '3.6.16')).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    }
    // Cut to the same prefix, two clusters still get two names.
    expect(preUpgradeSnapshotName(long, '3.6.16')).not.toBe(preUpgradeSnapshotName(other, '3.6.16'));
  });
});
