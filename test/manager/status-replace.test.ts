import { describe, expect, it } from 'vitest';
import { peerURL } from '../../machines/policy.ts';
import type { ClusterEvent } from '../../machines/types.ts';
import { at, bootstrap, claims, condition, membersIn, ok, ref, type Recorder } from './cluster-recorder.ts';

/** etcd's list: these voters (healthy, demo-0 leads), then an optional learner. */
const etcdOf = (voters: readonly number[], learner?: { n: number; started: boolean }): ClusterEvent => {
  const member = (n: number, isLearner: boolean, started = true) => ({
    id: `a${n}`,
    name: started ? `demo-${n}` : '',
    peerURL: peerURL(ref, `demo-${n}`),
    learner: isLearner,
  });
  const members = [
    ...voters.map((n) => member(n, false)),
    ...(learner ? [member(learner.n, true, learner.started)] : []),
  ];
  const healthy = members.filter((m) => m.name !== '').map((m) => m.id);
  return { type: 'etcd.members.listed', at: at(), etcd: { clusterID: 'c1', members, healthy, leader: 'a0' } };
};
/** A steady 3-member cluster whose demo-1 lost its data: it has left, and demo-3 is created to replace it. */
function replacingUpToNewMember(): Recorder {
  const r = bootstrap(3);
  r.send(
    membersIn([
      [0, 'voter'],
      [1, 'replacing'],
      [2, 'voter'],
    ]),
  );
  expect(r.d.state).toBe('replacing.removing.deletingMember.running');
  r.send(
    ok('deleteMember'),
    membersIn([
      [0, 'voter'],
      [2, 'voter'],
    ]),
    etcdOf([0, 2]),
  );
  expect(r.d.state).toBe('replacing.joining.addingLearner.running');
  r.send(ok('addLearner', { memberID: 'a3', initialCluster: '' }), ok('createMember'));
  expect(r.d.state).toBe('replacing.joining.awaitingStart');
  return r;
}

describe('manager: MemberReplaced says a member was replaced only once its replacement votes', () => {
  it('reads Replacing from the lost member to the new voter, and True once etcd lists it a voter', () => {
    const r = replacingUpToNewMember();
    expect(condition(r.status, 'MemberReplaced')).toMatchObject({ status: 'False', reason: 'Replacing' });
    r.send(etcdOf([0, 2], { n: 3, started: true }), ok('promoteLearner'));
    expect(r.d.state).not.toMatch(/^replacing/);
    // Promoted, but etcd's list that shows it a voter has not come yet.
    expect(claims(r, 'MemberReplaced')).toEqual([]);
    r.send(
      membersIn([
        [0, 'voter'],
        [2, 'voter'],
        [3, 'voter'],
      ]),
      etcdOf([0, 2, 3]),
      etcdOf([0, 2, 3]),
    );
    expect(condition(r.status, 'MemberReplaced')).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: 'a member whose data was lost was replaced by a new one',
    });
  });

  it('a replacement whose own node is lost before it starts ends the step without a replacement: not MemberReplaced', () => {
    const r = replacingUpToNewMember();
    r.send(
      membersIn([
        [0, 'voter'],
        [2, 'voter'],
        [3, 'nodeLost'],
      ]),
    );
    expect(r.d.state).not.toMatch(/^replacing\.joining/);
    expect(claims(r, 'MemberReplaced')).toEqual([]);
    expect(condition(r.status, 'MemberReplaced')).toMatchObject({ status: 'False', reason: 'Replacing' });
  });
});
