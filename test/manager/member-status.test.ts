import { describe, expect, it } from 'vitest';
import { initialMemberContext, type MemberContext } from '../../machines/member-decide.ts';
import { memberStatus } from '../../manager/member-status.ts';

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
});
