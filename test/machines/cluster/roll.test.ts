import { describe, expect, it } from 'vitest';
import { initialClusterContext, type ClusterContext } from '../../../machines/cluster-decide.ts';
import { latchDuringRoll, outdatedMembers, rollGuards } from '../../../machines/cluster/roll/index.ts';
import { peerURL } from '../../../machines/policy.ts';
import { voters } from '../harness.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'uid-1' };
const OLD = '3.5.35';
const NEW = '3.6.16';

/** A context of three voters at these versions, demo-0 leading, the target latched at `target`. */
function rolling(versions: string[], target = { replicas: 3, version: NEW }): ClusterContext {
  const members = voters(versions);
  const ids = versions.map((_, n) => `a${n}`);
  return {
    ...initialClusterContext(ref),
    spec: target,
    target,
    members,
    membersSeen: true,
    etcd: {
      clusterID: 'c1',
      members: versions.map((_, n) => ({
        id: ids[n]!,
        name: `demo-${n}`,
        peerURL: peerURL(ref, `demo-${n}`),
        learner: false,
      })),
      healthy: ids,
      leader: 'a0',
      versions: Object.fromEntries(versions.map((v, n) => [ids[n]!, v])),
    },
  };
}

describe('roll: rules and guards', () => {
  it('takes followers by ordinal, the leader last', () => {
    expect(outdatedMembers(rolling([OLD, OLD, NEW])).map((m) => m.name)).toEqual(['demo-1', 'demo-0']);
  });

  it.each([
    ['a scale asked mid-roll keeps the replicas latched', [OLD, NEW, OLD], { replicas: 5, version: NEW }, 3],
    ['a scale with the roll done is latched', [NEW, NEW, NEW], { replicas: 5, version: NEW }, 5],
    // Going back with demo-1 already on 3.6.16 is a roll of its own (demo-1 back): it holds too.
    ['a scale and a roll back with a member to undo wait too', [OLD, NEW, OLD], { replicas: 5, version: OLD }, 3],
    ['a scale and a roll undone before its first member is latched', [OLD, OLD, OLD], { replicas: 5, version: OLD }, 5],
  ] as const)('latchDuringRoll: %s', (_, versions, next, replicas) => {
    expect(latchDuringRoll(rolling([...versions]), next)).toEqual({ ...next, replicas });
  });

  it('readyToRestart: every other voter healthy and in sync, no learner, on a fresh list', () => {
    const c = {
      ...rolling([OLD, OLD, OLD]),
      upgrade: { member: 'demo-1', memberID: 'a1', from: OLD, position: 1, total: 3 },
    };
    expect(rollGuards.readyToRestart({ context: c })).toBe(true);
    expect(rollGuards.readyToRestart({ context: { ...c, etcdStale: true } })).toBe(false);
    expect(rollGuards.readyToRestart({ context: { ...c, etcd: { ...c.etcd!, behind: ['a2'] } } })).toBe(false);
    // Its own health does not count.
    expect(rollGuards.readyToRestart({ context: { ...c, etcd: { ...c.etcd!, healthy: ['a0', 'a2'] } } })).toBe(true);
  });

  it('upgradeeUpgraded: a voter on the target version, answering with it, in sync', () => {
    const c = {
      ...rolling([OLD, NEW, OLD]),
      upgrade: { member: 'demo-1', memberID: 'a1', from: OLD, position: 1, total: 3 },
    };
    expect(rollGuards.upgradeeUpgraded({ context: c })).toBe(true);
    expect(rollGuards.upgradeeUpgraded({ context: { ...c, etcd: { ...c.etcd!, behind: ['a1'] } } })).toBe(false);
    expect(rollGuards.upgradeeGone({ context: c })).toBe(false);
    expect(rollGuards.upgradeeGone({ context: { ...c, members: c.members.filter((m) => m.name !== 'demo-1') } })).toBe(
      true,
    );
  });
});
