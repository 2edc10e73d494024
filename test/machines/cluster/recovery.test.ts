import { beforeEach, describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import { recoveryCondition } from '../../../machines/cluster/recovery/index.ts';
import type { ClusterEvent } from '../../../machines/types.ts';
import { Driver, play } from '../harness.ts';
import {
  ask,
  etcd,
  lost,
  members,
  ok,
  quorumLost,
  ref,
  resetClock,
  say,
  spec,
  steady,
  time,
} from './recovery-world.ts';

beforeEach(resetClock);

/** A recovery asked, and the requestID status.recovery says was handled, if any. */
const asked = (requestID: string, handled?: string): ClusterEvent => ({
  ...(ask(requestID) as Extract<ClusterEvent, { type: 'k8s.cluster.updated' }>),
  ...(handled ? { recoveryHandled: handled } : {}),
});

describe('cluster machine: recovery from a lost quorum', () => {
  it('says what a recovery would keep while quorum is lost, before anything is asked', () => {
    const d = quorumLost();
    expect(say(d)).toBe(
      "1 of 3 voters healthy; not answering: demo-1, demo-2: waiting for a healthy quorum before any change; if the members that do not answer are gone for good, a new spec.recovery.requestID recovers from demo-0: the data is demo-0's at revision 57 (raft applied index 120): a write the lost members applied beyond it, if any, is lost; every write demo-0 holds is kept, with its revisions",
    );
  });

  it('from the survivor: stops the lost, forces the survivor once, restarts it plainly, deletes the lost, then scales up', () => {
    const d = quorumLost();
    play(d, [
      [
        ask('r1'),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-1', 'demo-2'], dormant: true } }],
      ],
      [
        ok('setDormant'),
        'recovering.forcing.running',
        [{ type: 'setForceNewCluster', params: { member: 'demo-0', requestID: 'r1' } }],
      ],
    ]);
    expect(d.context.recovery).toMatchObject({ survivor: 'demo-0', survivorID: 'a0', applied: 120, revision: 57 });
    expect(recoveryCondition(d.context)?.reason).toBe('Recovering');
    play(d, [
      [ok('setForceNewCluster'), 'recovering.awaitingForced', []],
      // The old etcd answers until its Pod goes: the member list still has three.
      [etcd([0, 1, 2], [0], { 0: [120, 57] }), 'recovering.awaitingForced', []],
      [members({ 0: { pod: { forceNewCluster: 'r1' } }, ...lost }), 'recovering.awaitingForced', []],
      [
        etcd([0], [0]),
        'recovering.unforcing.running',
        [{ type: 'setForceNewCluster', params: { member: 'demo-0', requestID: null } }],
      ],
      [ok('setForceNewCluster'), 'recovering.awaitingPlain', []],
      [etcd([0], [0]), 'recovering.awaitingPlain', []],
      // Still the forced Pod: not yet.
      [
        members({
          0: { pod: { forceNewCluster: 'r1' } },
          1: { state: 'replacing', pod: undefined, dormant: true },
          2: { state: 'replacing', pod: undefined, dormant: true },
        }),
        'recovering.awaitingPlain',
        [],
      ],
      [
        members({
          1: { state: 'replacing', pod: undefined, dormant: true },
          2: { state: 'replacing', pod: undefined, dormant: true },
        }),
        'recovering.deletingLost.running',
        [{ type: 'deleteMember', params: { member: 'demo-1' } }],
      ],
      [ok('deleteMember'), 'recovering.deletingLost.running', [{ type: 'deleteMember', params: { member: 'demo-2' } }]],
      [ok('deleteMember'), 'recovering.awaitingGone', []],
      [members({ 1: null, 2: null }), 'observing', []],
    ]);
    expect(recoveryCondition(d.context)).toMatchObject({ status: 'True', reason: 'Completed' });
    expect(d.context.recovered?.message).toContain("demo-0's at revision 57");
    // The existing scale-up joins the others as learners.
    play(d, [[etcd([0], [0]), 'scalingUp.joining.addingLearner.running']]);
    expect(d.intents[0]).toMatchObject({ type: 'addLearner', params: { member: 'demo-3' } });
    // The same request is never acted on again.
    play(d, [[ask('r1'), 'scalingUp.joining.addingLearner.running', []]]);
  });

  it('a crash between force and plain restart resumes where it was, asking nothing twice', () => {
    const d = quorumLost();
    play(d, [
      [ask('r1'), 'recovering.stoppingLost.running'],
      [ok('setDormant'), 'recovering.forcing.running'],
      [ok('setForceNewCluster'), 'recovering.awaitingForced'],
    ]);
    d.restart();
    play(d, [
      [members({ 0: { pod: { forceNewCluster: 'r1' } }, ...lost }), 'recovering.awaitingForced', []],
      [
        etcd([0], [0]),
        'recovering.unforcing.running',
        [{ type: 'setForceNewCluster', params: { member: 'demo-0', requestID: null } }],
      ],
    ]);
    d.restart();
    play(d, [[ok('setForceNewCluster'), 'recovering.awaitingPlain', []]]);
  });

  it('refuses while a quorum answers, and changes nothing', () => {
    const e = steady();
    play(e, [[ask('r1'), 'steady', []]]);
    expect(recoveryCondition(e.context)).toEqual({
      status: 'False',
      reason: 'RecoveryRefused',
      message:
        'recovery request r1 refused, nothing was changed: a quorum answers (3 of 3 voters healthy): recovery is for a quorum lost for good, and would drop members that hold data',
    });
    // Judged once: the same request again is not refused again, nor acted on.
    play(e, [[ask('r1'), 'steady', []]]);
    expect(e.context.recovered?.at).toBeLessThan(time.clock);
  });

  it('refuses a named survivor that is not the most advanced, and one that does not answer', () => {
    // Five voters, two answering: no quorum.
    const d = new Driver(clusterMachine, { cluster: ref });
    const gone = { state: 'replacing' as const, pod: undefined };
    play(d, [
      [spec(undefined, 5), 'pending'],
      [members({ 2: gone, 3: gone, 4: gone }, 5), 'observing'],
      [etcd([0, 1, 2, 3, 4], [0, 1], { 0: [120, 57], 1: [130, 60] }), 'degraded'],
      [ask('r1', 'demo-0', 5), 'degraded', []],
    ]);
    expect(recoveryCondition(d.context)?.message).toBe(
      'recovery request r1 refused, nothing was changed: member demo-0 is not the most advanced: it applied the raft log to index 120 (revision 57), demo-1 to 130 (revision 60); recovering from demo-0 would lose what demo-1 has beyond it',
    );
    play(d, [[ask('r2', 'demo-2', 5), 'degraded', []]]);
    expect(recoveryCondition(d.context)?.message).toBe(
      'recovery request r2 refused, nothing was changed: member demo-2 does not answer; members that do: demo-1 (applied index 130, revision 60), demo-0 (applied index 120, revision 57)',
    );
    // Unnamed: the most advanced is chosen.
    play(d, [
      [
        ask('r3', undefined, 5),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-0', 'demo-2', 'demo-3', 'demo-4'], dormant: true } }],
      ],
    ]);
    expect(d.context.recovery?.survivor).toBe('demo-1');
  });

  it('is taken from a step that quorum loss holds for ever: a learner that can no longer be promoted', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    play(d, [
      [spec(), 'pending'],
      [members({ 2: null }), 'observing'],
      [etcd([0, 1], [0, 1]), 'bootstrapping.joining.addingLearner.running'],
      [ok('addLearner', { memberID: 'a3', initialCluster: 'x' }), 'bootstrapping.joining.creatingMember.running'],
      [ok('createMember'), 'bootstrapping.joining.awaitingStart'],
      [members({ 1: { state: 'replacing', pod: undefined }, 2: null }), 'bootstrapping.joining.awaitingStart'],
      [etcd([0, 1], [0], { 0: [90, 40] }), 'bootstrapping.joining.awaitingStart'],
      [
        ask('r1'),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-1'], dormant: true } }],
      ],
    ]);
    expect(d.context.joining).toBeNull();
  });

  it('a second request while one runs is refused at once, and the running one goes on', () => {
    const d = quorumLost();
    play(d, [
      [ask('r1'), 'recovering.stoppingLost.running'],
      [ok('setDormant'), 'recovering.forcing.running'],
      [ask('r2'), 'recovering.forcing.running', []],
    ]);
    expect(recoveryCondition(d.context)?.reason).toBe('Recovering');
    expect(d.context.recovered).toMatchObject({
      requestID: 'r2',
      result: 'refused',
      message:
        'recovery r1 is running (from demo-0): one at a time; ask again once it ended if the cluster still needs it',
    });
    play(d, [
      [ok('setForceNewCluster'), 'recovering.awaitingForced'],
      [members({ 0: { pod: { forceNewCluster: 'r1' } }, ...lost }), 'recovering.awaitingForced'],
      [etcd([0], [0]), 'recovering.unforcing.running'],
      [ok('setForceNewCluster'), 'recovering.awaitingPlain'],
      [etcd([0], [0]), 'recovering.awaitingPlain'],
      [members(lost), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.awaitingGone'],
      [members({ 1: null, 2: null }), 'observing'],
      // r2 is not judged again: the scale-up goes on.
      [etcd([0], [0]), 'scalingUp.joining.addingLearner.running'],
    ]);
    expect(d.context.recovered).toMatchObject({ requestID: 'r1', result: 'recovered' });
  });

  it('a manager without its journal (nor the resume annotation) does not judge again the request the status says was handled', () => {
    // What a new machine adopts: a 3-member cluster at rest, spec.recovery still r1 from a recovery done before.
    const adopt = (handled?: string): Driver<typeof clusterMachine> => {
      const d = new Driver(clusterMachine, { cluster: ref });
      play(d, [
        [asked('r1', handled), 'pending'],
        [members(), 'observing'],
        [etcd([0, 1, 2], [0, 1, 2]), 'updatingBudget.running'],
      ]);
      return d;
    };
    // Without status.recovery the request reads as new and is refused: Recovered would say so.
    expect(recoveryCondition(adopt().context)).toMatchObject({ reason: 'RecoveryRefused' });
    // With it: r1 is known as handled, nothing is judged, and the machine says nothing of it
    // (the Recovered condition the status has stays as it was).
    const d = adopt('r1');
    expect(d.context.judged).toEqual(['r1']);
    expect(recoveryCondition(d.context)).toBeNull();
    // A new requestID is judged as ever.
    play(d, [[ok('setDisruptionBudget', { minAvailable: 2 }), 'steady']]);
    play(d, [[asked('r2', 'r1'), 'steady', []]]);
    expect(d.context.recovered).toMatchObject({ requestID: 'r2', result: 'refused' });
    expect(d.context.judged).toEqual(['r1', 'r2']);
  });
});
