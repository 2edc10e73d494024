import { describe, expect, it } from 'vitest';
import { initialMemberContext, type MemberContext } from '../../machines/member-decide.ts';
import { memberMachine } from '../../machines/member.ts';
import type { MemberEvent } from '../../machines/types.ts';
import { memberStatus } from '../../manager/member-status.ts';
import { Driver } from '../machines/harness.ts';

const member = { namespace: 'default', name: 'demo-1', uid: 'm1', cluster: 'demo' };
const base = initialMemberContext({ member, bootstrap: false, medium: '' });
const NOW = Date.parse('2026-11-21T12:00:00Z');
const condition = (s: ReturnType<typeof memberStatus>, type: string) => s.conditions?.find((c) => c.type === type);

describe('member status', () => {
  it('a started learner waits to be promoted: state promoting, memberID and role from etcd, Promoted False, data not yet initialized', () => {
    const c: MemberContext = {
      ...base,
      pvcBound: true,
      everRan: false,
      etcd: { id: 'ab12', name: 'demo-1', peerURL: 'http://x:2380', learner: true },
    };
    const s = memberStatus(undefined, { path: 'joiningLearner.catchingUp', context: c, generation: 2 }, NOW);
    expect(s).toMatchObject({
      state: 'promoting',
      memberID: 'ab12',
      role: 'learner',
      podName: 'demo-1',
      pvcName: 'data-demo-1',
      observedGeneration: 2,
    });
    expect(s.dataInitialized).toBeUndefined();
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'Promoting' });
    expect(condition(s, 'Promoted')).toMatchObject({ status: 'False' });
    expect(condition(s, 'VolumeReady')).toMatchObject({ status: 'True' });
  });

  it('a voter that ran: dataInitialized, Joined and Promoted True, nothing in progress', () => {
    const c: MemberContext = {
      ...base,
      pvcBound: true,
      everRan: true,
      etcd: { id: 'ab12', name: 'demo-1', peerURL: 'http://x:2380', learner: false },
    };
    const s = memberStatus(undefined, { path: 'voter', context: c, generation: 1 }, NOW);
    expect(s).toMatchObject({ state: 'voter', role: 'voter', dataInitialized: true });
    expect(condition(s, 'Joined')?.status).toBe('True');
    expect(condition(s, 'Promoted')?.status).toBe('True');
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'Voter' });
  });

  it('a member restarted onto an older version reads downgrading in its State column and Progressing, upgrading onto a newer one', () => {
    const c: MemberContext = {
      ...base,
      pvcBound: true,
      everRan: true,
      version: '3.5.35',
      ranVersion: '3.6.16',
      pod: { uid: 'p1', phase: 'Running', ready: true, deleting: false, restarts: 0, version: '3.6.16' },
    };
    const down = memberStatus(undefined, { path: 'upgrading.stoppingPod.running', context: c, generation: 3 }, NOW);
    expect(down.state).toBe('downgrading');
    expect(condition(down, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Downgrading',
      message: 'restarting on etcd 3.5.35 (it ran 3.6.16) with the same volume and member ID: stopping the Pod',
    });
    const up = { ...c, version: '3.6.16', ranVersion: '3.5.35', pod: { ...c.pod, version: '3.5.35' } } as MemberContext;
    const s = memberStatus(down, { path: 'upgrading.stoppingPod.running', context: up, generation: 4 }, NOW);
    expect(s.state).toBe('upgrading');
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'Upgrading' });
  });

  it('a member in memory has no claim and needs no volume', () => {
    const c: MemberContext = { ...base, medium: 'Memory' };
    const s = memberStatus(undefined, { path: 'pending', context: c, generation: 1 }, NOW);
    expect(s.pvcName).toBeUndefined();
    expect(condition(s, 'VolumeReady')).toMatchObject({ status: 'True', reason: 'NoVolumeNeeded' });
  });

  it("keeps a condition's transition time while its status holds", () => {
    const c: MemberContext = { ...base, pvcBound: true, everRan: true };
    const first = memberStatus(undefined, { path: 'voter', context: c, generation: 1 }, NOW);
    const later = memberStatus(first, { path: 'voter', context: c, generation: 1 }, NOW + 60_000);
    expect(condition(later, 'Joined')?.lastTransitionTime).toBe(condition(first, 'Joined')?.lastTransitionTime);
  });

  it('a seed etcd lists as started, whose Pod went before it was seen Ready, gets its next Pod with the data expected', () => {
    // A manager stopped between the seed's Pod running etcd and its Ready being seen; then the
    // Pod went and its volume was wiped. The new Pod's check must refuse the empty volume.
    const d = new Driver(memberMachine, { member, bootstrap: true, medium: '' });
    let t = NOW;
    const send = (e: Omit<MemberEvent, 'at'>) => d.send({ ...e, at: (t += 10) } as MemberEvent);
    send({
      type: 'k8s.member.updated',
      dormant: false,
      deleting: false,
      clusterDeleting: false,
      generation: 1,
      clusterGeneration: 1,
    } as never);
    send({ type: 'k8s.pvc.observed', bound: true } as never);
    send({ type: 'k8s.pod.observed', pod: null } as never);
    send({ type: 'effect.createPod.succeeded', result: { uid: 'p1' } } as never);
    send({
      type: 'k8s.pod.observed',
      pod: { uid: 'p1', phase: 'Running', ready: false, deleting: false, restarts: 0 },
    } as never);
    const status = () => memberStatus(undefined, { path: d.state, context: d.context, generation: 1 }, t);
    expect(d.state).toBe('bootstrapping.awaitingReady');
    expect(status().dataInitialized).toBeUndefined();
    const started = { id: 'ab12', name: 'demo-1', peerURL: 'http://x:2380', learner: false, started: true };
    send({ type: 'etcd.member.observed', member: started } as never);
    // Still shown as starting: only the data check reads it.
    expect(d.state).toBe('bootstrapping.awaitingReady');
    expect(status()).toMatchObject({ state: 'bootstrapping', dataInitialized: true });
    // The probe failing later does not take it back.
    send({ type: 'etcd.member.observed', member: null } as never);
    const out = d.send({ type: 'k8s.pod.observed', at: (t += 10), pod: null });
    expect(out.intents.map((i) => i.type)).toEqual(['createPod']);
    expect(status().dataInitialized).toBe(true);
  });
});
