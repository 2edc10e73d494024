import { describe, expect, it } from 'vitest';
import { describeMember } from '../../machines/describe.ts';
import { memberMachine } from '../../machines/member.ts';
import type { MemberEvent } from '../../machines/types.ts';
import { Driver, type Intent } from './harness.ts';

const member = { namespace: 'default', name: 'demo-1', uid: 'm-1', cluster: 'demo' };
const peer = 'http://demo-1.demo.default.svc:2380';
let clock = 5_000;
const at = (): number => (clock += 10);

const updated = (
  o: {
    dormant?: boolean;
    deleting?: boolean;
    clusterDeleting?: boolean;
    clusterGeneration?: number;
    alone?: boolean;
  } = {},
): MemberEvent => ({
  type: 'k8s.member.updated',
  at: at(),
  dormant: o.dormant ?? false,
  deleting: o.deleting ?? false,
  clusterDeleting: o.clusterDeleting ?? false,
  generation: 1,
  clusterGeneration: o.clusterGeneration ?? 1,
  ...(o.alone !== undefined ? { alone: o.alone } : {}),
});
const pod = (ready: boolean, uid = 'p1', restarts = 0): MemberEvent => ({
  type: 'k8s.pod.observed',
  at: at(),
  pod: { uid, phase: ready ? 'Running' : 'Pending', ready, deleting: false, restarts },
});
const podGoing = (uid: string): MemberEvent => ({
  type: 'k8s.pod.observed',
  at: at(),
  pod: { uid, phase: 'Running', ready: false, deleting: true, restarts: 0 },
});
const noPod = (): MemberEvent => ({ type: 'k8s.pod.observed', at: at(), pod: null });
/** Its Pod, on node-b, being evicted by Kubernetes because node-b is down. */
const podEvicted = (uid = 'p1'): MemberEvent => ({
  type: 'k8s.pod.observed',
  at: at(),
  pod: { uid, phase: 'Running', ready: false, deleting: true, restarts: 0, evictedFromNode: 'node-b' },
});
const pvc = (bound: boolean | null): MemberEvent => ({ type: 'k8s.pvc.observed', at: at(), bound });
const etcd = (learner: boolean | null): MemberEvent => ({
  type: 'etcd.member.observed',
  at: at(),
  member: learner === null ? null : { id: 'b1', name: 'demo-1', peerURL: peer, learner },
});
const ok = (kind: string, result?: Record<string, unknown>): MemberEvent =>
  ({ type: `effect.${kind}.succeeded`, at: at(), result }) as MemberEvent;
const failed = (kind: string): MemberEvent =>
  ({ type: `effect.${kind}.failed`, at: at(), error: { code: 'ERR', message: 'no' } }) as MemberEvent;
const refused = (kind: string): MemberEvent =>
  ({
    type: `effect.${kind}.failed`,
    at: at(),
    error: { code: 'ERR_CREATE_POD', message: 'HTTP 422: Pod "demo-1" is invalid', retryable: false },
  }) as MemberEvent;
const tick = (ms: number): MemberEvent => ({ type: 'timer.tick', at: (clock += ms) });
const intent = (type: string, params: object = { member: 'demo-1' }): Intent => ({ type, params });

type Step = readonly [MemberEvent, string, Intent[]?];
function play(d: Driver<typeof memberMachine>, steps: readonly Step[]): void {
  for (const [event, state, intents] of steps) {
    const out = d.send(event);
    expect(out.state, `after ${event.type}`).toBe(state);
    if (intents) expect(out.intents, `intents after ${event.type}`).toEqual(intents);
  }
}

/** A member that joined as a learner, was promoted and runs as a voter. */
function runningVoter(medium: '' | 'Memory' = ''): Driver<typeof memberMachine> {
  const d = new Driver(memberMachine, { member, bootstrap: false, medium });
  play(d, [
    [updated(), 'pending'],
    [pvc(medium === 'Memory' ? null : true), 'pending'],
  ]);
  play(d, [
    [noPod(), 'joiningLearner.starting.creatingPod.running', [intent('createPod')]],
    [ok('createPod', { uid: 'p1' }), 'joiningLearner.starting.awaitingReady'],
    [pod(true), 'voter'],
    [etcd(false), 'voter'],
  ]);
  return d;
}

describe('member machine', () => {
  it('a member deleted while its Pod cannot be created (a namespace going) stops retrying and leaves', () => {
    const d = runningVoter();
    play(d, [
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [failed('createPod'), 'restarting.creatingPod.backingOff', []],
      [updated({ deleting: true, clusterDeleting: true }), 'removing.releasing.running', [intent('releaseFinalizer')]],
    ]);
  });

  it('a seed gets its volume, then its Pod, and reports itself running', () => {
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    play(d, [
      [updated(), 'pending', []],
      [noPod(), 'pending', []],
      [pvc(null), 'creatingVolume.creating.running', [intent('createPVC')]],
      [ok('createPVC'), 'creatingVolume.awaitingVolume', []],
      [pvc(false), 'bootstrapping.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'bootstrapping.awaitingReady', []],
      [pod(false), 'bootstrapping.awaitingReady', []],
      [pod(true), 'voter', []],
    ]);
    expect(d.context.everRan).toBe(true);
  });

  it('a joining member stays joiningLearner until etcd promotes it', () => {
    const d = new Driver(memberMachine, { member, bootstrap: false, medium: '' });
    play(d, [
      [updated(), 'pending'],
      [pvc(true), 'pending'],
      [noPod(), 'joiningLearner.starting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'joiningLearner.starting.awaitingReady'],
      [etcd(true), 'joiningLearner.starting.awaitingReady'],
      [pod(true), 'joiningLearner.catchingUp', []],
      [etcd(false), 'voter', []],
    ]);
  });

  it('does not create its Pod twice when the watch has not caught up with the create', () => {
    const d = new Driver(memberMachine, { member, bootstrap: false, medium: '' });
    play(d, [
      [updated(), 'pending'],
      [pvc(true), 'pending'],
      [noPod(), 'joiningLearner.starting.creatingPod.running'],
      [ok('createPod', { uid: 'p1' }), 'joiningLearner.starting.awaitingReady'],
    ]);
    play(d, [[noPod(), 'joiningLearner.starting.awaitingReady', []]]);
  });

  it('comes back from its volume when its Pod is deleted or killed', () => {
    const d = runningVoter();
    play(d, [
      [pod(false), 'restarting.awaitingReady', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'restarting.awaitingReady'],
      [pod(true, 'p2'), 'voter', []],
    ]);
  });

  it('a first start seen Ready while its create is retried counts as run: a restart in place after it is rechecked', () => {
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    play(d, [
      [updated(), 'pending'],
      [pvc(true), 'pending'],
      [noPod(), 'bootstrapping.creatingPod.running', [intent('createPod')]],
      // The create passed its deadline, but the API server made the Pod, which starts and is Ready.
      [failed('createPod'), 'bootstrapping.creatingPod.backingOff', []],
      [pod(true), 'voter', []],
    ]);
    expect(d.context.everRan).toBe(true);
    // etcd restarts in the Pod (its volume wiped): the check-data init container does not run again.
    play(d, [[pod(false, 'p1', 1), 'rechecking.stoppingPod.running', [intent('deletePod')]]]);
  });

  it('retries a failed Pod create with back-off', () => {
    const d = runningVoter();
    play(d, [
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [failed('createPod'), 'restarting.creatingPod.backingOff', []],
      [tick(400), 'restarting.creatingPod.backingOff', []],
      [tick(700), 'restarting.creatingPod.running', [intent('createPod')]],
    ]);
  });

  it('stops on a failure retrying cannot fix, and tries again once its cluster is edited', () => {
    const d = runningVoter();
    play(d, [
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [refused('createPod'), 'failed', []],
      [tick(60_000), 'failed', []],
      [noPod(), 'failed', []],
    ]);
    // No back-off is left: the runtime has no timer to wake it for.
    expect(d.context.retryAt).toBeNull();
    play(d, [
      [updated(), 'failed', []],
      [updated({ clusterGeneration: 2 }), 'restarting.creatingPod.running', [intent('createPod')]],
    ]);
    expect(d.context.lastError).toBeNull();
  });

  it('a failed member still leaves etcd when it is deleted', () => {
    const d = runningVoter();
    play(d, [
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [refused('createPod'), 'failed', []],
      [
        updated({ deleting: true }),
        'removing.leavingEtcd.running',
        [intent('removeEtcdMember', { peerURL: peer, memberID: 'b1', reason: 'its EtcdMember is being deleted' })],
      ],
    ]);
  });

  it("a first failure while joining is one the user reads, with the API server's words", () => {
    const d = new Driver(memberMachine, { member, bootstrap: false, medium: '' });
    play(d, [
      [updated(), 'pending'],
      [pvc(true), 'pending'],
      [noPod(), 'joiningLearner.starting.creatingPod.running'],
      [refused('createPod'), 'failed', []],
    ]);
    expect(describeMember(d.state, d.context)).toMatchObject({ state: 'failed', step: 'Failed' });
    expect(describeMember(d.state, d.context).message).toContain('HTTP 422: Pod "demo-1" is invalid');
  });

  it('etcd restarted inside its Pod: the Pod goes so a new one checks the volume first', () => {
    const d = runningVoter();
    play(d, [
      [pod(true, 'p1', 0), 'voter', []],
      [pod(false, 'p1', 1), 'rechecking.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'rechecking.awaitingGone', []],
      [podGoing('p1'), 'restarting.awaitingReady', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'restarting.awaitingReady', []],
      // The new Pod's check-data found the volume empty.
      [{ type: 'member.data.lost', at: at(), reason: 'data directory is empty' }, 'replacing.stopped', []],
    ]);
  });

  it('a Pod first seen with restarts behind it is not rechecked for them, and a restart loop backs off', () => {
    const d = runningVoter();
    play(d, [
      [noPod(), 'restarting.creatingPod.running'],
      [ok('createPod', { uid: 'p2' }), 'restarting.awaitingReady'],
      [pod(true, 'p2', 4), 'voter', []],
      [pod(false, 'p2', 5), 'rechecking.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'rechecking.awaitingGone'],
      [noPod(), 'restarting.creatingPod.running'],
      [ok('createPod', { uid: 'p3' }), 'restarting.awaitingReady'],
      [pod(false, 'p3', 0), 'restarting.awaitingReady'],
      // It never got ready: the second check in a row waits a back-off first.
      [pod(false, 'p3', 1), 'rechecking.waiting', []],
      [tick(500), 'rechecking.waiting', []],
      [tick(600), 'rechecking.stoppingPod.running', [intent('deletePod')]],
    ]);
  });

  it('a Memory member whose etcd restarted inside its Pod keeps that Pod (its data is in it)', () => {
    const d = runningVoter('Memory');
    play(d, [
      [pod(true, 'p1', 0), 'voter', []],
      [pod(false, 'p1', 1), 'restarting.awaitingReady', []],
      [pod(true, 'p1', 1), 'voter', []],
    ]);
  });

  it('a Memory member whose Pod went is replaced, never restarted empty', () => {
    const d = runningVoter('Memory');
    play(d, [[noPod(), 'replacing.stopped', []]]);
    expect(d.context.dataLost).toMatch(/Memory/);
  });

  it('a member whose volume claim is gone is replaced, not given a new volume', () => {
    const d = runningVoter();
    play(d, [[pvc(null), 'replacing.stoppingPod.running', [intent('deletePod')]]]);
    expect(d.context.dataLost).toMatch(/PersistentVolumeClaim/);
  });

  it('a member told its data was wiped stops its Pod and waits to be replaced', () => {
    const d = runningVoter();
    play(d, [
      [
        { type: 'member.data.lost', at: at(), reason: 'data directory is empty' },
        'replacing.stoppingPod.running',
        [intent('deletePod')],
      ],
      [ok('deletePod'), 'replacing.awaitingGone', []],
      [noPod(), 'replacing.stopped', []],
      [
        updated({ deleting: true }),
        'removing.leavingEtcd.running',
        [intent('removeEtcdMember', { peerURL: peer, memberID: 'b1', reason: 'its EtcdMember is being deleted' })],
      ],
    ]);
  });

  it('a member whose node is down waits as nodeLost; deleted, it leaves etcd, then force-deletes its Pod', () => {
    const d = runningVoter();
    play(d, [
      [pod(false), 'restarting.awaitingReady', []],
      [podEvicted(), 'nodeLost', []],
      [
        updated({ deleting: true }),
        'removing.leavingEtcd.running',
        [intent('removeEtcdMember', { peerURL: peer, memberID: 'b1', reason: 'its EtcdMember is being deleted' })],
      ],
      [
        ok('removeEtcdMember'),
        'removing.forcingPod.running',
        [intent('forceDeletePod', { member: 'demo-1', uid: 'p1' })],
      ],
      [failed('forceDeletePod'), 'removing.forcingPod.backingOff', []],
      [tick(60_000), 'removing.forcingPod.running', [intent('forceDeletePod', { member: 'demo-1', uid: 'p1' })]],
      [ok('forceDeletePod'), 'removing.releasing.running', [intent('releaseFinalizer')]],
    ]);
    expect(describeMember('nodeLost', d.context).message).toContain('node-b is down');
  });

  it('a member whose node comes back before it is replaced restarts there from its volume', () => {
    const d = runningVoter();
    play(d, [
      [podEvicted(), 'nodeLost', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
    ]);
    expect(d.context.dataLost).toBeNull();
  });

  /** A learner that never started: its Pod on node-b is Pending, etcd lists it, not started. */
  function unstartedLearner(): Driver<typeof memberMachine> {
    const d = new Driver(memberMachine, { member, bootstrap: false, medium: '' });
    play(d, [
      [updated(), 'pending'],
      [pvc(true), 'pending'],
      [noPod(), 'joiningLearner.starting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'joiningLearner.starting.awaitingReady'],
      [pod(false), 'joiningLearner.starting.awaitingReady'],
      [
        { type: 'etcd.member.observed', at: at(), member: { id: 'b1', name: '', peerURL: peer, learner: true } },
        'joiningLearner.starting.awaitingReady',
      ],
    ]);
    return d;
  }
  /** Its claim, bound to a volume pinned to node-b, which no longer exists. */
  const pvcOnLostNode = (): MemberEvent => ({ type: 'k8s.pvc.observed', at: at(), bound: true, lostNode: 'node-b' });

  it('a member of a new cluster whose Pod never starts waits in bootstrapping, saying why; its node lost, it waits to be replaced', () => {
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    const unschedulable: MemberEvent = {
      type: 'k8s.pod.observed',
      at: at(),
      pod: {
        uid: 'p1',
        phase: 'Pending',
        ready: false,
        deleting: false,
        restarts: 0,
        trouble: { reason: 'Unschedulable', message: 'its Pod cannot be scheduled: 0/3 nodes are available' },
      },
    };
    play(d, [
      [updated(), 'pending', []],
      [pvc(true), 'pending', []],
      [noPod(), 'bootstrapping.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'bootstrapping.awaitingReady', []],
      [unschedulable, 'bootstrapping.awaitingReady', []],
      [tick(600_000), 'bootstrapping.awaitingReady', []],
    ]);
    // Never a second Pod, never a volume of its own again: it is the same member of the initial cluster.
    expect(describeMember(d.state, d.context).message).toBe(
      'starting etcd for the first time with a new cluster (--initial-cluster-state new): the seed, or one of the members a new cluster starts with at once; its Pod cannot be scheduled: 0/3 nodes are available',
    );
    play(d, [[podEvicted(), 'nodeLost', []]]);
  });

  it("a recovery's seed that never started (its restore cannot read the snapshot) is in no etcd cluster: deleted, it lets go without asking etcd", () => {
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    play(d, [
      [updated({ alone: true }), 'pending', []],
      [pvc(true), 'pending', []],
      [noPod(), 'bootstrapping.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'bootstrapping.awaitingReady', []],
      [updated({ alone: true, deleting: true }), 'removing.releasing.running', [intent('releaseFinalizer')]],
    ]);
  });

  it('a member of a new cluster of several that never started still leaves etcd when deleted (the others list it)', () => {
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    play(d, [
      [updated({ alone: false }), 'pending', []],
      [pvc(true), 'pending', []],
      [noPod(), 'bootstrapping.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'bootstrapping.awaitingReady', []],
      [updated({ alone: false, deleting: true }), 'removing.leavingEtcd.running'],
    ]);
  });

  it('a member of a new cluster whose claim waits for a node that is then deleted waits as nodeLost, saying its claim was for that node', () => {
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    // WaitForFirstConsumer: the claim stays Pending until its Pod's node, node-c, runs the
    // provisioner's helper Pod; node-c hangs, so the Pod is never bound.
    play(d, [
      [updated(), 'pending', []],
      [pvc(false), 'pending', []],
      [noPod(), 'bootstrapping.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p1' }), 'bootstrapping.awaitingReady', []],
      [pod(false), 'bootstrapping.awaitingReady', []],
      [{ type: 'k8s.pvc.observed', at: at(), bound: false, lostNode: 'node-c' }, 'nodeLost', []],
      [pod(false), 'nodeLost', []],
    ]);
    expect(describeMember(d.state, d.context).message).toBe(
      'its claim is Pending, its volume to be made on node node-c (the node chosen for its Pod), which no longer exists, so no Pod of it can run; the cluster replaces it with a new member on a live node while a quorum remains',
    );
    // The provisioner gives node-c up before the cluster replaced it: the Pod may go elsewhere.
    play(d, [[pvc(false), 'bootstrapping.awaitingReady', []]]);
  });

  it('a learner that never started, whose node was deleted (its Pod with it, its volume pinned there), waits as nodeLost, no new Pod', () => {
    const d = unstartedLearner();
    play(d, [
      // Kubernetes' garbage collector deleted the Pod of the deleted node: a new Pod could only be Pending.
      [noPod(), 'joiningLearner.starting.creatingPod.running', [intent('createPod')]],
      [pvcOnLostNode(), 'nodeLost', []],
      [noPod(), 'nodeLost', []],
    ]);
    expect(describeMember('nodeLost', d.context).message).toContain('pinned to node node-b, which no longer exists');
    // Deleted by the cluster machine: it leaves etcd (a learner) and lets go; no Pod is left to force.
    play(d, [
      [
        updated({ deleting: true }),
        'removing.leavingEtcd.running',
        [intent('removeEtcdMember', { peerURL: peer, memberID: 'b1', reason: 'its EtcdMember is being deleted' })],
      ],
      [ok('removeEtcdMember'), 'removing.releasing.running', [intent('releaseFinalizer')]],
    ]);
  });

  it('a learner that never started, its Pod evicted from a down node, waits as nodeLost', () => {
    const d = unstartedLearner();
    play(d, [[podEvicted(), 'nodeLost', []]]);
  });

  it('a claim pinned to a live node (the lost node back) lets the member start there again', () => {
    const d = unstartedLearner();
    play(d, [
      [pvcOnLostNode(), 'nodeLost', []],
      [noPod(), 'nodeLost', []],
      [pvc(true), 'joiningLearner.starting.creatingPod.running', [intent('createPod')]],
    ]);
  });

  it('parks: its Pod goes, its volume stays, and it restarts from it when woken', () => {
    const d = runningVoter();
    play(d, [
      [updated({ dormant: true }), 'parking.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'parking.awaitingGone', []],
      [noPod(), 'parking.stopped', []],
      [updated({ dormant: false }), 'restarting.creatingPod.running', [intent('createPod')]],
    ]);
  });

  it('leaves etcd before letting go of its finalizer', () => {
    const d = runningVoter();
    play(d, [
      [
        updated({ deleting: true }),
        'removing.leavingEtcd.running',
        [intent('removeEtcdMember', { peerURL: peer, memberID: 'b1', reason: 'its EtcdMember is being deleted' })],
      ],
      [failed('removeEtcdMember'), 'removing.leavingEtcd.backingOff', []],
      [
        tick(1500),
        'removing.leavingEtcd.running',
        [intent('removeEtcdMember', { peerURL: peer, memberID: 'b1', reason: 'its EtcdMember is being deleted' })],
      ],
      [ok('removeEtcdMember'), 'removing.releasing.running', [intent('releaseFinalizer')]],
      [ok('releaseFinalizer'), 'removed', []],
    ]);
    expect(d.snapshot.status).toBe('done');
  });

  it('stops trying to leave etcd once its whole cluster is going, and lets go of its finalizer', () => {
    const d = runningVoter();
    play(d, [
      [updated({ deleting: true }), 'removing.leavingEtcd.running'],
      [failed('removeEtcdMember'), 'removing.leavingEtcd.backingOff', []],
      // The namespace is being deleted: the EtcdCluster goes too, and etcd with it.
      [updated({ deleting: true, clusterDeleting: true }), 'removing.releasing.running', [intent('releaseFinalizer')]],
      [ok('releaseFinalizer'), 'removed', []],
    ]);
  });

  it('retries etcd\'s "not yet" to a removal every 500 ms, as the cluster machine does', () => {
    const d = runningVoter();
    const removal = intent('removeEtcdMember', {
      peerURL: peer,
      memberID: 'b1',
      reason: 'its EtcdMember is being deleted',
    });
    const unhealthy = {
      type: 'effect.removeEtcdMember.failed',
      at: at(),
      error: { code: 'ERR_ETCD_UNHEALTHY', message: 'etcdserver: unhealthy cluster' },
    } as MemberEvent;
    play(d, [
      [updated({ deleting: true }), 'removing.leavingEtcd.running', [removal]],
      [unhealthy, 'removing.leavingEtcd.backingOff', []],
      [tick(400), 'removing.leavingEtcd.backingOff', []],
      [tick(100), 'removing.leavingEtcd.running', [removal]],
    ]);
  });

  it('when its whole cluster is deleted it lets go without touching etcd', () => {
    const d = runningVoter();
    play(d, [
      [updated({ deleting: true, clusterDeleting: true }), 'removing.releasing.running', [intent('releaseFinalizer')]],
    ]);
  });

  it('resumes mid-step after a restart without asking for the same intent again', () => {
    const d = runningVoter();
    play(d, [[noPod(), 'restarting.creatingPod.running', [intent('createPod')]]]);
    d.restart();
    play(d, [
      [noPod(), 'restarting.creatingPod.running', []],
      [ok('createPod', { uid: 'p3' }), 'restarting.awaitingReady', []],
    ]);
  });
});

describe('member machine: new CAs to trust', () => {
  const trusting = (trust: string): MemberEvent => ({ ...updated(), version: '3.6.16', trust }) as MemberEvent;
  const podTrusting = (trust: string | undefined, ready: boolean, uid: string, deleting = false): MemberEvent => ({
    type: 'k8s.pod.observed',
    at: at(),
    pod: { uid, phase: 'Running', ready, deleting, restarts: 0, version: '3.6.16', ...(trust ? { trust } : {}) },
  });

  it('a Pod made with another CA digest than its spec names is made again (etcd reads its CA files only at start)', () => {
    const d = runningVoter();
    play(d, [
      [{ ...updated(), version: '3.6.16' } as MemberEvent, 'voter'],
      [podTrusting('a', true, 'p1'), 'voter'],
      [trusting('a'), 'voter', []],
      [trusting('b'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
    ]);
    expect(describeMember(d.state, d.context)).toEqual({
      state: 'reconfiguring',
      step: 'Reconfiguring',
      message:
        'restarting on etcd 3.6.16 to trust the CA certificates now in its Secrets with the same volume and member ID: stopping the Pod',
    });
    play(d, [
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'restarting.awaitingReady', []],
      [podTrusting('b', true, 'p2'), 'voter', []],
    ]);
  });

  it('a Pod from before digests (no annotation) is made again once its spec names one; without TLS nothing restarts', () => {
    const d = runningVoter();
    play(d, [
      [{ ...updated(), version: '3.6.16' } as MemberEvent, 'voter'],
      [podTrusting(undefined, true, 'p1'), 'voter', []],
      [tick(60_000), 'voter', []],
      [trusting('a'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
    ]);
  });
});

describe('member machine: a recovery forces its survivor once', () => {
  const forcing = (forceNewCluster?: string): MemberEvent =>
    ({ ...updated(), version: '3.6.16', ...(forceNewCluster ? { forceNewCluster } : {}) }) as MemberEvent;
  const podForced = (forced: string | undefined, ready: boolean, uid: string): MemberEvent => ({
    type: 'k8s.pod.observed',
    at: at(),
    pod: {
      uid,
      phase: 'Running',
      ready,
      deleting: false,
      restarts: 0,
      version: '3.6.16',
      ...(forced ? { forceNewCluster: forced } : {}),
    },
  });

  it('a Pod is made again with --force-new-cluster while its spec asks, and again without once it no longer does', () => {
    const d = runningVoter();
    play(d, [
      [forcing(), 'voter'],
      [podForced(undefined, false, 'p1'), 'restarting.awaitingReady'],
      [forcing('r1'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
    ]);
    expect(describeMember(d.state, d.context)).toEqual({
      state: 'reconfiguring',
      step: 'Reconfiguring',
      message:
        'restarting on etcd 3.6.16 once with --force-new-cluster (recovery r1): a cluster of one, its data kept with the same volume and member ID: stopping the Pod',
    });
    play(d, [
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'restarting.awaitingReady', []],
      [podForced('r1', true, 'p2'), 'voter', []],
      [forcing(), 'upgrading.stoppingPod.running', [intent('deletePod')]],
    ]);
    const plain = describeMember(d.state, d.context);
    expect(plain.state).toBe('reconfiguring');
    expect(plain.message).toContain('without --force-new-cluster');
    play(d, [
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p3' }), 'restarting.awaitingReady', []],
      [podForced(undefined, true, 'p3'), 'voter', []],
    ]);
  });
});

describe('member machine: what a user reads', () => {
  it('a parked member shows as dormant only once its Pod is gone', () => {
    const d = runningVoter();
    play(d, [[updated({ dormant: true }), 'parking.stoppingPod.running']]);
    expect(describeMember(d.state, d.context).state).toBe('parking');
    play(d, [
      [ok('deletePod'), 'parking.awaitingGone'],
      [noPod(), 'parking.stopped'],
    ]);
    expect(describeMember(d.state, d.context)).toEqual({
      state: 'dormant',
      step: 'Dormant',
      message: 'dormant: no Pod runs; the volume and member ID are kept',
    });
  });
});

describe('member machine: a new etcd version', () => {
  const versioned = (version: string): MemberEvent => ({ ...updated(), version }) as MemberEvent;
  const podOn = (version: string, ready: boolean, uid: string, deleting = false): MemberEvent => ({
    type: 'k8s.pod.observed',
    at: at(),
    pod: { uid, phase: 'Running', ready, deleting, restarts: 0, version },
  });

  /** A voter running 3.5.35. */
  function onOld(): Driver<typeof memberMachine> {
    const d = runningVoter();
    play(d, [
      [versioned('3.5.35'), 'voter'],
      [podOn('3.5.35', true, 'p1'), 'voter'],
    ]);
    return d;
  }

  it('restarts its Pod on the version its spec names, with the same volume, and is a voter again once ready', () => {
    const d = onOld();
    play(d, [
      [versioned('3.6.16'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [podOn('3.5.35', false, 'p1', true), 'upgrading.awaitingGone', []],
      [noPod(), 'upgrading.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'upgrading.awaitingReady', []],
      [podOn('3.6.16', false, 'p2'), 'upgrading.awaitingReady', []],
    ]);
    expect(describeMember(d.state, d.context)).toEqual({
      state: 'upgrading',
      step: 'Upgrading',
      message:
        'restarting on etcd 3.6.16 (it ran 3.5.35) with the same volume and member ID: waiting for the new Pod to be ready',
    });
    play(d, [[podOn('3.6.16', true, 'p2'), 'voter', []]]);
  });

  it('a restart onto an older version reads Downgrading, from stopping the old Pod until the new one is ready', () => {
    const d = runningVoter();
    play(d, [
      [versioned('3.6.16'), 'voter'],
      [podOn('3.6.16', true, 'p1'), 'voter'],
      [versioned('3.5.35'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
    ]);
    expect(describeMember(d.state, d.context)).toEqual({
      state: 'downgrading',
      step: 'Downgrading',
      message: 'restarting on etcd 3.5.35 (it ran 3.6.16) with the same volume and member ID: stopping the Pod',
    });
    play(d, [
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'upgrading.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'upgrading.awaitingReady', []],
      [podOn('3.5.35', false, 'p2'), 'upgrading.awaitingReady', []],
    ]);
    expect(describeMember(d.state, d.context)).toMatchObject({ state: 'downgrading', step: 'Downgrading' });
    play(d, [[podOn('3.5.35', true, 'p2'), 'voter', []]]);
    expect(describeMember(d.state, d.context).state).toBe('voter');
  });

  it('a Pod that cannot start the new version is replaced by one on the old version when the spec goes back', () => {
    const d = onOld();
    play(d, [
      [versioned('3.6.99'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'upgrading.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p2' }), 'upgrading.awaitingReady', []],
      [podOn('3.6.99', false, 'p2'), 'upgrading.awaitingReady', []],
      [tick(600_000), 'upgrading.awaitingReady', []],
      [versioned('3.5.35'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'restarting.creatingPod.running', [intent('createPod')]],
      [ok('createPod', { uid: 'p3' }), 'restarting.awaitingReady', []],
      [podOn('3.5.35', true, 'p3'), 'voter', []],
    ]);
  });

  it('a member on Memory loses its data with its Pod: an upgrade makes it a member to replace, not a restart', () => {
    const d = runningVoter('Memory');
    play(d, [
      [versioned('3.5.35'), 'voter'],
      [podOn('3.5.35', true, 'p1'), 'voter'],
      [versioned('3.6.16'), 'upgrading.stoppingPod.running', [intent('deletePod')]],
      [ok('deletePod'), 'upgrading.awaitingGone', []],
      [noPod(), 'replacing.stopped', []],
    ]);
  });
});

describe('member machine: what a user reads', () => {
  it('a Pod that runs but is not Ready reads as notReady (waiting for a quorum), not as being restarted', () => {
    const d = runningVoter();
    const unready: MemberEvent = {
      type: 'k8s.pod.observed',
      at: at(),
      pod: { uid: 'p1', phase: 'Running', ready: false, deleting: false, restarts: 0 },
    };
    play(d, [[unready, 'restarting.awaitingReady', []]]);
    expect(describeMember(d.state, d.context)).toMatchObject({
      state: 'notReady',
      step: 'NotReady',
      message: expect.stringContaining('waits for a quorum of its cluster') as string,
    });
    // Its Pod gone: that is a restart.
    play(d, [[noPod(), 'restarting.creatingPod.running', [intent('createPod')]]]);
    expect(describeMember(d.state, d.context).state).toBe('restarting');
  });
});

describe('member machine: what keeps its Pod from running, and since when', () => {
  it('troubleSince holds the time the reason was first seen, moves with a new reason, and clears once it runs', () => {
    const d = new Driver(memberMachine, { member, bootstrap: false, medium: '' });
    const stuckPod = (reason: string): MemberEvent => ({
      type: 'k8s.pod.observed',
      at: at(),
      pod: { uid: 'p1', phase: 'Pending', ready: false, deleting: false, trouble: { reason, message: reason } },
    });
    const first = stuckPod('Unschedulable');
    d.send(first);
    expect(d.context.troubleSince).toEqual({ reason: 'Unschedulable', at: first.at });
    d.send(stuckPod('Unschedulable'));
    expect(d.context.troubleSince).toEqual({ reason: 'Unschedulable', at: first.at });
    const pulling = stuckPod('ImagePullBackOff');
    d.send(pulling);
    expect(d.context.troubleSince).toEqual({ reason: 'ImagePullBackOff', at: pulling.at });
    d.send(pod(true));
    expect(d.context.troubleSince).toBeNull();
    // A claim Pending counts first, whatever the Pod says.
    const pending: MemberEvent = {
      type: 'k8s.pvc.observed',
      at: at(),
      bound: false,
      trouble: { reason: 'ClaimPending', message: 'PersistentVolumeClaim data-demo-1 is Pending' },
    };
    d.send(pending);
    expect(d.context.troubleSince).toEqual({ reason: 'ClaimPending', at: pending.at });
  });
});
