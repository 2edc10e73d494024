import { describe, expect, it } from 'vitest';
import { bootstrap, claims, condition, listed, memberList, ok, spec } from './cluster-recorder.ts';

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
