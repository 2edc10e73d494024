import { describe, expect, it } from 'vitest';
import type { ClusterEvent } from '../../machines/types.ts';
import { degradedDueAt, UNWELL_GRACE_MS } from '../../manager/status-degraded.ts';
import { at, bootstrap, condition, listed, memberList, ok, Recorder, spec, tick } from './cluster-recorder.ts';

describe('manager: Degraded says when something needs attention', () => {
  it('a voter down past the grace: Degraded QuorumAtRisk at 2 of 3, naming it; False again once it is back', () => {
    const r = bootstrap(3);
    r.send(listed(3, undefined, [2]));
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'False' });
    r.send(tick(UNWELL_GRACE_MS), listed(3, undefined, [2]));
    expect(r.d.state).toBe('steady');
    expect(condition(r.status, 'Available')).toMatchObject({ status: 'True', message: '2 of 3 voters healthy' });
    expect(condition(r.status, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'QuorumAtRisk',
      message: expect.stringMatching(
        /^demo-2 not healthy since .*: 2 of 3 voters healthy, one more down loses quorum$/,
      ) as string,
    });
    r.send(listed(3));
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'False', reason: 'Steady' });
  });

  it('one voter of five down past the grace: Degraded MemberUnhealthy, quorum holds', () => {
    const r = bootstrap(5);
    r.send(listed(5, undefined, [1]), tick(UNWELL_GRACE_MS + 1000));
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'MemberUnhealthy' });
    expect(condition(r.status, 'Degraded')?.message).toContain('4 of 5 voters healthy');
  });

  it('a voter down is looked at again when the grace runs out, so Degraded says it then, not at the next event', () => {
    const r = bootstrap(3);
    expect(degradedDueAt(r.d.context, at())).toBeNull();
    r.send(listed(3, undefined, [2]));
    const since = r.d.context.unwellSince ?? 0;
    expect(degradedDueAt(r.d.context, since + 1000)).toBe(since + UNWELL_GRACE_MS);
    // Past the grace nothing more is due: Degraded says it from the work at the grace on.
    expect(degradedDueAt(r.d.context, since + UNWELL_GRACE_MS)).toBeNull();
    r.send(listed(3));
    expect(degradedDueAt(r.d.context, at())).toBeNull();
  });

  it('etcd not answering past the grace is Degraded, not "nothing needs attention"', () => {
    const r = bootstrap(3);
    r.send({ type: 'etcd.unreachable', at: at(), error: 'connection refused' });
    r.send(tick(UNWELL_GRACE_MS + 1000));
    expect(condition(r.status, 'Available')).toMatchObject({ status: 'False' });
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'True' });
  });

  it('a TLS Secret without ca.crt is Degraded InvalidReference at once, with the error', () => {
    const r = new Recorder();
    r.send(memberList(0), spec(1), ok('ensureServices'));
    r.send({
      type: 'effect.createMember.failed',
      at: at(),
      error: {
        code: 'ERR_TLS_SECRET',
        message: 'member demo-0 cannot be started: Secret default/peer lacks ca.crt',
      },
    });
    expect(condition(r.status, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InvalidReference',
      message: expect.stringContaining('Secret default/peer lacks ca.crt') as string,
    });
  });

  it('a step failing on trouble three times in a row is Degraded StepRetrying; once is not', () => {
    const r = new Recorder();
    r.send(memberList(0), spec(1));
    const fail = () =>
      r.send({
        type: 'effect.ensureServices.failed',
        at: at(),
        error: { code: 'ERR_ENSURE_SERVICES', message: 'HTTP 500' },
      });
    fail();
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'False' });
    for (let i = 0; i < 2; i++) {
      r.send(tick(60_000));
      fail();
    }
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'StepRetrying' });
  });
});

describe('manager: Available counts quorum over every voter etcd lists', () => {
  /** Our three voters, demo-2 down, and two voters etcd lists that no EtcdMember accounts for (down too). */
  const withStrangers = (strangersUp: boolean): ClusterEvent => {
    const base = listed(3, undefined, [2]) as Extract<ClusterEvent, { type: 'etcd.members.listed' }>;
    const strangers = ['x0', 'x1'].map((name) => ({
      id: `f${name}`,
      name,
      peerURL: `https://${name}.elsewhere:2380`,
      learner: false,
    }));
    return {
      ...base,
      etcd: {
        ...base.etcd,
        members: [...base.etcd.members, ...strangers],
        healthy: [...base.etcd.healthy, ...(strangersUp ? strangers.map((s) => s.id) : [])],
      },
    };
  };

  it('two of five voters healthy is no quorum, though both healthy ones are of the three with an EtcdMember', () => {
    const r = bootstrap(3);
    r.send(withStrangers(false));
    expect(condition(r.status, 'Available')).toMatchObject({
      status: 'False',
      reason: 'QuorumLost',
      message: '2 of 5 voters healthy; a quorum is 3',
    });
    r.send(tick(UNWELL_GRACE_MS), withStrangers(false));
    expect(condition(r.status, 'Degraded')).toMatchObject({ status: 'True', reason: 'QuorumLost' });
  });

  it('four of five healthy is a quorum, though one of the three with an EtcdMember is down', () => {
    const r = bootstrap(3);
    r.send(withStrangers(true));
    expect(condition(r.status, 'Available')).toMatchObject({
      status: 'True',
      reason: 'QuorumHealthy',
      message: '4 of 5 voters healthy',
    });
  });
});
