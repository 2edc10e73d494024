import { describe, expect, it } from 'vitest';
import { UNWELL_GRACE_MS } from '../../manager/status-degraded.ts';
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
