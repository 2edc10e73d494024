import { beforeEach, describe, expect, it } from 'vitest';
import { recoveryCondition } from '../../../machines/cluster/recovery/index.ts';
import { peerURL } from '../../../machines/policy.ts';
import type { ClusterEvent, MemberObservation, RecoveryRequest } from '../../../machines/types.ts';
import { clusterMachine } from '../../../machines/cluster.ts';
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

const fromSnapshot = (requestID: string, o: Partial<RecoveryRequest> = {}): ClusterEvent =>
  spec({ requestID, from: 'snapshot', ...o });

/** What resolveRecoverySnapshot reports: EtcdSnapshot nightly of demo at revision 40. */
const nightly = (o: Record<string, unknown> = {}) => ({
  name: 'nightly',
  cluster: 'demo',
  revision: 40,
  location: 'pvc://backups/default/demo/nightly.db',
  completionTime: '2026-11-27T03:00:00Z',
  ...o,
});

const refused = (kind: string, message: string): ClusterEvent =>
  ({
    type: `effect.${kind}.failed`,
    at: (time.clock += 10),
    error: { code: 'ERR_RECOVERY_SNAPSHOT', message, retryable: false },
  }) as ClusterEvent;

/** Every old member stopped: made dormant, no Pod. */
const stopped = { pod: undefined, dormant: true, state: 'dormant' as const };
const allStopped = { 0: stopped, 1: stopped, 2: stopped };

/** The seed demo-3 as listed once it runs. */
const seed: MemberObservation = {
  name: 'demo-3',
  ordinal: 3,
  bootstrap: true,
  dormant: false,
  state: 'voter',
  deleting: false,
  pod: { forceNewCluster: '' },
};

/** etcd as the restored cluster answers: demo-3 alone, a new cluster ID, leading. */
const restored = (): ClusterEvent => ({
  type: 'etcd.members.listed',
  at: (time.clock += 10),
  etcd: {
    clusterID: 'c2',
    members: [{ id: 'b3', name: 'demo-3', peerURL: peerURL(ref, 'demo-3'), learner: false }],
    healthy: ['b3'],
    leader: 'b3',
  },
});

/** The old members as listed: the ones in `o` as given, the seed beside them once it exists. */
const withSeed = (o: Record<number, Partial<MemberObservation> | null>): ClusterEvent => {
  const e = members(o) as Extract<ClusterEvent, { type: 'k8s.members.listed' }>;
  return { ...e, members: [...e.members, seed] };
};

/** A recovery r1 from the snapshot nightly, every member stopped, its seed's createMember asked. */
function atSeed(): Driver<typeof clusterMachine> {
  const d = quorumLost();
  play(d, [
    [fromSnapshot('r1'), 'recovering.resolvingSnapshot.running'],
    [ok('resolveRecoverySnapshot', nightly()), 'recovering.holdingSnapshot.running'],
    [ok('holdSnapshot'), 'recovering.stoppingLost.running'],
    [ok('setDormant'), 'recovering.awaitingStopped'],
    [members(allStopped), 'recovering.creatingSeed.running'],
  ]);
  return d;
}

describe('cluster machine: recovery from a snapshot', () => {
  it('finds the snapshot, stops every member, restores a new seed from it, deletes the old members, then scales up', () => {
    const d = quorumLost();
    play(d, [
      [
        fromSnapshot('r1'),
        'recovering.resolvingSnapshot.running',
        [{ type: 'resolveRecoverySnapshot', params: { cluster: 'demo', requestID: 'r1' } }],
      ],
    ]);
    // Said before anything is changed: the snapshot is looked up first.
    expect(recoveryCondition(d.context)).toMatchObject({ status: 'False', reason: 'Recovering' });
    play(d, [
      [
        ok('resolveRecoverySnapshot', nightly()),
        'recovering.holdingSnapshot.running',
        [{ type: 'holdSnapshot', params: { snapshot: 'nightly', cluster: 'demo' } }],
      ],
    ]);
    // Held before anything is changed: deleting it now keeps its stored file.
    expect(say(d)).toContain("holding EtcdSnapshot nightly with this cluster's finalizer");
    play(d, [
      [
        ok('holdSnapshot'),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-0', 'demo-1', 'demo-2'], dormant: true } }],
      ],
    ]);
    // What is lost, against the most advanced member that answers (demo-0 at 57).
    expect(recoveryCondition(d.context)?.message).toBe(
      "recovering from EtcdSnapshot nightly (request r1): the data is EtcdSnapshot nightly's at revision 40 (stored 2026-11-27T03:00:00Z, pvc://backups/default/demo/nightly.db): every write after revision 40 is lost; the most advanced member that answered was at revision 57: the 17 revisions after 40 are lost; revisions go on from 40 + 1000000000, marked compacted, so a watcher sees a compaction, never revisions going back",
    );
    play(d, [
      [ok('setDormant'), 'recovering.awaitingStopped', []],
      // demo-0's Pod still runs: the seed waits.
      [members({ 1: stopped, 2: stopped }), 'recovering.awaitingStopped', []],
      [
        members(allStopped),
        'recovering.creatingSeed.running',
        [
          {
            type: 'createMember',
            params: {
              member: 'demo-3',
              ordinal: 3,
              bootstrap: true,
              initialCluster: `demo-3=${peerURL(ref, 'demo-3')}`,
              version: '3.6.16',
              restoreFrom: 'nightly',
            },
          },
        ],
      ],
    ]);
    expect(say(d)).toContain('restoring demo-3 from the snapshot, waiting until it answers alone and leads');
    play(d, [
      [ok('createMember'), 'recovering.awaitingSeed', []],
      // The old cluster's last answer is not the seed's.
      [etcd([0, 1, 2], [], { 0: [120, 57] }), 'recovering.awaitingSeed', []],
      [withSeed(allStopped), 'recovering.awaitingSeed', []],
      // Restored: the snapshot is let go, and a deletion of it waiting goes on.
      [
        restored(),
        'recovering.releasingSnapshot.running',
        [{ type: 'releaseSnapshotHold', params: { snapshot: 'nightly', cluster: 'demo' } }],
      ],
      [
        ok('releaseSnapshotHold'),
        'recovering.deletingLost.running',
        [{ type: 'deleteMember', params: { member: 'demo-0' } }],
      ],
    ]);
    expect(d.context.holding).toBeNull();
    expect(d.context.clusterID).toBe('c2');
    play(d, [
      [ok('deleteMember'), 'recovering.deletingLost.running', [{ type: 'deleteMember', params: { member: 'demo-1' } }]],
      [ok('deleteMember'), 'recovering.deletingLost.running', [{ type: 'deleteMember', params: { member: 'demo-2' } }]],
      [ok('deleteMember'), 'recovering.awaitingGone', []],
      [withSeed({ 0: null, 1: null, 2: null }), 'observing', []],
    ]);
    expect(recoveryCondition(d.context)).toMatchObject({ status: 'True', reason: 'Completed' });
    expect(d.context.recovered?.message).toBe(
      "recovered from EtcdSnapshot nightly (request r1) into demo-3: the data is EtcdSnapshot nightly's at revision 40 (stored 2026-11-27T03:00:00Z, pvc://backups/default/demo/nightly.db): every write after revision 40 is lost; the most advanced member that answered was at revision 57: the 17 revisions after 40 are lost; revisions go on from 40 + 1000000000, marked compacted, so a watcher sees a compaction, never revisions going back; demo-0, demo-1, demo-2 deleted, new members join as learners until spec.replicas voters run",
    );
    // The restored cluster is this cluster now (its new ID latched): it grows, not `degraded`.
    play(d, [[restored(), 'scalingUp.joining.addingLearner.running']]);
    expect(d.intents[0]).toMatchObject({ type: 'addLearner', params: { member: 'demo-4' } });
    play(d, [[fromSnapshot('r1'), 'scalingUp.joining.addingLearner.running', []]]);
  });

  it('restores a named snapshot when no member answers at all', () => {
    const d = quorumLost();
    play(d, [
      // The members that still run answer no status call: none reports its progress.
      [etcd([0, 1, 2], [], {}), 'degraded'],
      [
        fromSnapshot('r1', { snapshotName: 'weekly' }),
        'recovering.resolvingSnapshot.running',
        [{ type: 'resolveRecoverySnapshot', params: { cluster: 'demo', requestID: 'r1', snapshotName: 'weekly' } }],
      ],
    ]);
    play(d, [
      [
        ok('resolveRecoverySnapshot', nightly({ name: 'weekly' })),
        'recovering.holdingSnapshot.running',
        [{ type: 'holdSnapshot', params: { snapshot: 'weekly', cluster: 'demo' } }],
      ],
    ]);
    expect(recoveryCondition(d.context)?.message).toContain(
      'every write after revision 40 is lost; no member answered to say how far the cluster had gone',
    );
  });

  it('a crash after the seed was asked for resumes waiting for it, with the same seed and nothing asked twice', () => {
    const d = atSeed();
    d.restart();
    // The createMember failed and is tried again: the same name, never a second seed.
    play(d, [
      [
        {
          type: 'effect.createMember.failed',
          at: (time.clock += 10),
          error: { code: 'ERR_CREATE_MEMBER', message: 'x' },
        },
        'recovering.creatingSeed.backingOff',
        [],
      ],
    ]);
    play(d, [[{ type: 'timer.tick', at: (time.clock += 60_000) }, 'recovering.creatingSeed.running']]);
    expect(d.intents).toMatchObject([{ type: 'createMember', params: { member: 'demo-3', restoreFrom: 'nightly' } }]);
    play(d, [[ok('createMember'), 'recovering.awaitingSeed']]);
    d.restart();
    play(d, [
      [withSeed(allStopped), 'recovering.awaitingSeed', []],
      [
        restored(),
        'recovering.releasingSnapshot.running',
        [{ type: 'releaseSnapshotHold', params: { snapshot: 'nightly', cluster: 'demo' } }],
      ],
    ]);
    // A crash before the release's answer: releaseSnapshotHold's recover reads the finalizer back.
    d.restart();
    play(d, [
      [
        ok('releaseSnapshotHold'),
        'recovering.deletingLost.running',
        [{ type: 'deleteMember', params: { member: 'demo-0' } }],
      ],
    ]);
  });

  it("with spec.auth.enabled, asks etcd again whether auth is on once the seed restored: the snapshot's data says, not the old cluster's", () => {
    // Another cluster's snapshot may have been taken with auth off.
    const withAuth = (recovery?: RecoveryRequest): ClusterEvent => ({ ...spec(recovery), auth: true }) as ClusterEvent;
    const enableAuth = { type: 'enableAuth', params: { cluster: 'demo' } };
    const d = new Driver(clusterMachine, { cluster: ref });
    play(d, [
      [withAuth(), 'pending'],
      [members(), 'observing'],
      [etcd([0, 1, 2], [0, 1, 2]), 'enablingAuth.running', [enableAuth]],
      [ok('enableAuth', { enabled: true, did: [] }), 'updatingBudget.running'],
      [ok('setDisruptionBudget', { minAvailable: 2 }), 'steady'],
      [etcd([0, 1, 2], [0], { 0: [120, 57] }), 'degraded', []],
      [members({ 1: { state: 'replacing', pod: undefined }, 2: { state: 'replacing', pod: undefined } }), 'degraded'],
    ]);
    const other = { requestID: 'r1', from: 'snapshot', snapshotName: 'theirs', allowOtherCluster: true } as const;
    play(d, [
      [withAuth(other), 'recovering.resolvingSnapshot.running'],
      [
        ok('resolveRecoverySnapshot', nightly({ name: 'theirs', cluster: 'other' })),
        'recovering.holdingSnapshot.running',
      ],
      [ok('holdSnapshot'), 'recovering.stoppingLost.running'],
      [ok('setDormant'), 'recovering.awaitingStopped'],
      [members(allStopped), 'recovering.creatingSeed.running'],
      [ok('createMember'), 'recovering.awaitingSeed'],
      [withSeed(allStopped), 'recovering.awaitingSeed', []],
      [restored(), 'recovering.releasingSnapshot.running'],
    ]);
    expect(d.context.authEnabled).toBeUndefined();
    // Not known is what a machine without its journal has too: a crash here asks the same.
    d.restart();
    expect(d.context.authEnabled).toBeUndefined();
    play(d, [
      [ok('releaseSnapshotHold'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.awaitingGone'],
      [withSeed({ 0: null, 1: null, 2: null }), 'observing', []],
      // Asked before the cluster grows: the seed's data has auth off, and enableAuth turns it on.
      [restored(), 'enablingAuth.running', [enableAuth]],
      [
        ok('enableAuth', { enabled: true, did: ['user add root', 'role add root', 'auth enable'] }),
        'scalingUp.joining.addingLearner.running',
      ],
    ]);
    expect(d.context.authEnabled).toBe(true);
  });

  it('its EtcdSnapshot deleted before the seed exists: refused, the members it stopped started again, a new request judged', () => {
    const d = atSeed();
    const gone = 'EtcdSnapshot default/nightly does not exist';
    play(d, [
      [
        {
          type: 'effect.createMember.failed',
          at: (time.clock += 10),
          error: { code: 'ERR_SNAPSHOT_GONE', message: gone, retryable: false },
        },
        'recovering.releasingSnapshot.running',
        [{ type: 'releaseSnapshotHold', params: { snapshot: 'nightly', cluster: 'demo' } }],
      ],
      [
        ok('releaseSnapshotHold'),
        'recovering.restartingStopped.running',
        [{ type: 'setDormant', params: { members: ['demo-0', 'demo-1', 'demo-2'], dormant: false } }],
      ],
    ]);
    expect(d.context.recovery).toBeNull();
    expect(recoveryCondition(d.context)).toEqual({
      status: 'False',
      reason: 'RecoveryRefused',
      message: `recovery request r1 refused: EtcdSnapshot nightly was deleted after the recovery found it, before demo-3 was made from it (${gone}): nothing was restored and nothing deleted; demo-0, demo-1, demo-2, stopped for the restore, start again as they were, each with its own volume and data; ask again with a new requestID (another snapshot, or from a survivor) if the cluster still needs it`,
    });
    // A crash here resumes starting them (setDormant's recover reads each member back).
    d.restart();
    // A request while they start is judged once they run, not before.
    play(d, [
      [ok('setDormant'), 'recovering.awaitingRestarted', []],
      [ask('r2'), 'recovering.awaitingRestarted', []],
      [members({ 1: lost[1], 2: lost[2] }), 'recovering.awaitingRestarted', []],
    ]);
    // Restarted without a quorum, demo-0 serves no client (etcd waits to publish itself through
    // raft): etcd does not answer, and what each member said before it stopped is what is known.
    play(d, [
      [
        { type: 'etcd.unreachable', at: (time.clock += 10), error: 'none of 1 member answered' },
        'recovering.awaitingRestarted',
        [],
      ],
    ]);
    play(d, [
      [
        members({ 1: { state: 'replacing', pod: undefined }, 2: { state: 'replacing', pod: undefined } }),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-1', 'demo-2'], dormant: true } }],
      ],
    ]);
    // The new request, from the survivor: not refused as "one at a time", demo-0 chosen by its last answer.
    expect(d.context.recovery).toMatchObject({ requestID: 'r2', survivor: 'demo-0' });
  });

  it('its seed cannot read the snapshot (the stored file gone out of band): the seed deleted, the snapshot let go, refused, the members it stopped started again', () => {
    const d = atSeed();
    const why =
      'init container restore-fetch cannot read the snapshot to restore: fetch-snapshot failed: /restore-source/default/demo/nightly.db does not exist';
    const unreadable = (o: Partial<MemberObservation> = {}): ClusterEvent => {
      const e = members(allStopped) as Extract<ClusterEvent, { type: 'k8s.members.listed' }>;
      const stuck = {
        ...seed,
        state: 'bootstrapping' as const,
        trouble: { reason: 'SnapshotUnreadable', message: why, since: time.clock },
      };
      return { ...e, members: [...e.members, { ...stuck, ...o }] };
    };
    play(d, [
      [ok('createMember'), 'recovering.awaitingSeed', []],
      // A crash loop that may pass (an image pull, say) is waited out, as any start.
      [unreadable({ trouble: { reason: 'ImagePullBackOff', message: 'x', since: 0 } }), 'recovering.awaitingSeed', []],
      [unreadable(), 'recovering.removingSeed.running', [{ type: 'deleteMember', params: { member: 'demo-3' } }]],
    ]);
    expect(say(d)).toContain(`demo-3 cannot restore (${why}), which no retry fixes: deleting it`);
    play(d, [
      [ok('deleteMember'), 'recovering.awaitingSeedGone', []],
      [unreadable({ deleting: true }), 'recovering.awaitingSeedGone', []],
      [
        members(allStopped),
        'recovering.releasingSnapshot.running',
        [{ type: 'releaseSnapshotHold', params: { snapshot: 'nightly', cluster: 'demo' } }],
      ],
    ]);
    expect(recoveryCondition(d.context)).toEqual({
      status: 'False',
      reason: 'RecoveryRefused',
      message: `recovery request r1 refused: demo-3 could not restore from EtcdSnapshot nightly (${why}), which no retry fixes: demo-3 was deleted, nothing was restored and nothing else deleted; demo-0, demo-1, demo-2, stopped for the restore, start again as they were, each with its own volume and data; ask again with a new requestID (another snapshot, or from a survivor) if the cluster still needs it`,
    });
    // A crash before the release's answer resumes letting go, then starting the members again.
    d.restart();
    play(d, [
      [
        ok('releaseSnapshotHold'),
        'recovering.restartingStopped.running',
        [{ type: 'setDormant', params: { members: ['demo-0', 'demo-1', 'demo-2'], dormant: false } }],
      ],
      [ok('setDormant'), 'recovering.awaitingRestarted', []],
    ]);
    expect(d.context.holding).toBeNull();
    expect(d.context.recovered).toMatchObject({
      requestID: 'r1',
      result: 'refused',
      restarted: ['demo-0', 'demo-1', 'demo-2'],
    });
    // Restarted without a quorum, no member answers; the seed never did, so what each member said
    // before it stopped is still what is known, and a next request is judged on it (not waited on).
    play(d, [
      [ask('r2'), 'recovering.awaitingRestarted', []],
      [members({ 1: lost[1], 2: lost[2] }), 'recovering.awaitingRestarted', []],
      [
        { type: 'etcd.unreachable', at: (time.clock += 10), error: 'none of 1 member answered' },
        'recovering.awaitingRestarted',
        [],
      ],
      [
        members({ 1: { state: 'replacing', pod: undefined }, 2: { state: 'replacing', pod: undefined } }),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-1', 'demo-2'], dormant: true } }],
      ],
    ]);
    expect(d.context.recovery).toMatchObject({ requestID: 'r2', survivor: 'demo-0' });
  });

  it('its EtcdSnapshot already being deleted when it is to be held: refused, nothing changed, nothing held', () => {
    const d = quorumLost();
    const deleting = 'EtcdSnapshot default/nightly is being deleted, its stored file with it';
    play(d, [
      [fromSnapshot('r1'), 'recovering.resolvingSnapshot.running'],
      [ok('resolveRecoverySnapshot', nightly()), 'recovering.holdingSnapshot.running'],
      [
        {
          type: 'effect.holdSnapshot.failed',
          at: (time.clock += 10),
          error: { code: 'ERR_SNAPSHOT_GONE', message: deleting, retryable: false },
        },
        'degraded',
        [],
      ],
    ]);
    expect(recoveryCondition(d.context)?.message).toBe(
      `recovery request r1 refused, nothing was changed: EtcdSnapshot nightly is being deleted (${deleting}): a restore from it could not fetch it; ask again with another snapshot`,
    );
    expect(d.context.holding).toBeNull();
    expect(d.context.members.every((m) => !m.dormant)).toBe(true);
  });

  it('refuses while a quorum answers, and changes nothing, saying how a rollback is asked', () => {
    const d = steady();
    play(d, [[fromSnapshot('r1', { snapshotName: 'nightly' }), 'steady', []]]);
    expect(recoveryCondition(d.context)?.message).toBe(
      'recovery request r1 refused, nothing was changed: a quorum answers (3 of 3 voters healthy): recovery is for a quorum lost for good, and would drop members that hold data; to roll a healthy cluster back to a snapshot, losing every write after it, set rollback: true with snapshotName',
    );
  });

  it('rolls a healthy cluster back in place when asked with rollback: reads its revision first, then as from a lost quorum', () => {
    const d = steady();
    play(d, [
      [
        fromSnapshot('r1', { snapshotName: 'nightly', rollback: true }),
        'recovering.resolvingSnapshot.running',
        [{ type: 'resolveRecoverySnapshot', params: { cluster: 'demo', requestID: 'r1', snapshotName: 'nightly' } }],
      ],
      [ok('resolveRecoverySnapshot', nightly()), 'recovering.holdingSnapshot.running'],
      [
        ok('holdSnapshot'),
        'recovering.readingRevision.running',
        [{ type: 'readRevision', params: { cluster: 'demo' } }],
      ],
    ]);
    expect(recoveryCondition(d.context)?.message).toContain(
      "every write after revision 40 is lost; the cluster's revision is being read",
    );
    play(d, [
      [
        ok('readRevision', { revision: 1200 }),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-0', 'demo-1', 'demo-2'], dormant: true } }],
      ],
    ]);
    // Said before any member stops: the snapshot's revision against the cluster's.
    expect(recoveryCondition(d.context)?.message).toContain(
      'every write after revision 40 is lost; the cluster was at revision 1200 when the rollback was asked: the 1160 revisions after 40 are lost',
    );
    play(d, [
      [ok('setDormant'), 'recovering.awaitingStopped'],
      [members(allStopped), 'recovering.creatingSeed.running'],
      [ok('createMember'), 'recovering.awaitingSeed'],
      [withSeed(allStopped), 'recovering.awaitingSeed'],
      [restored(), 'recovering.releasingSnapshot.running'],
      [ok('releaseSnapshotHold'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.deletingLost.running'],
      [ok('deleteMember'), 'recovering.awaitingGone'],
      [withSeed({ 0: null, 1: null, 2: null }), 'observing'],
    ]);
    expect(d.context.recovered).toMatchObject({ requestID: 'r1', result: 'recovered' });
    expect(d.context.recovered?.message).toContain('the 1160 revisions after 40 are lost');
  });

  it('refuses, with nothing changed, when no snapshot may be restored', () => {
    const d = quorumLost();
    const why =
      'no EtcdSnapshot of EtcdCluster demo in default is Succeeded without a failed verification: there is no snapshot to recover from';
    play(d, [
      [fromSnapshot('r1'), 'recovering.resolvingSnapshot.running'],
      [refused('resolveRecoverySnapshot', why), 'degraded', []],
    ]);
    expect(recoveryCondition(d.context)?.message).toBe(`recovery request r1 refused, nothing was changed: ${why}`);
    expect(d.context.recovery).toBeNull();
    expect(d.context.members.every((m) => !m.dormant)).toBe(true);
  });

  it("refuses another cluster's snapshot unless allowOtherCluster says so", () => {
    const d = quorumLost();
    play(d, [
      [fromSnapshot('r1', { snapshotName: 'theirs' }), 'recovering.resolvingSnapshot.running'],
      [ok('resolveRecoverySnapshot', nightly({ name: 'theirs', cluster: 'other' })), 'degraded', []],
    ]);
    expect(recoveryCondition(d.context)?.message).toBe(
      "recovery request r1 refused, nothing was changed: EtcdSnapshot theirs is of EtcdCluster other, not demo: restoring it would replace demo's data with other's; set spec.recovery.allowOtherCluster to true if that is meant",
    );
    play(d, [
      [fromSnapshot('r2', { snapshotName: 'theirs', allowOtherCluster: true }), 'recovering.resolvingSnapshot.running'],
      [
        ok('resolveRecoverySnapshot', nightly({ name: 'theirs', cluster: 'other' })),
        'recovering.holdingSnapshot.running',
        [{ type: 'holdSnapshot', params: { snapshot: 'theirs', cluster: 'demo' } }],
      ],
      [
        ok('holdSnapshot'),
        'recovering.stoppingLost.running',
        [{ type: 'setDormant', params: { members: ['demo-0', 'demo-1', 'demo-2'], dormant: true } }],
      ],
    ]);
  });

  it('a second request while one runs is refused, naming the snapshot of the one running', () => {
    const d = quorumLost();
    play(d, [
      [fromSnapshot('r1'), 'recovering.resolvingSnapshot.running'],
      [ok('resolveRecoverySnapshot', nightly()), 'recovering.holdingSnapshot.running'],
      [ok('holdSnapshot'), 'recovering.stoppingLost.running'],
      [fromSnapshot('r2'), 'recovering.stoppingLost.running', []],
    ]);
    expect(d.context.recovered).toMatchObject({
      requestID: 'r2',
      result: 'refused',
      message:
        'recovery r1 is running (from EtcdSnapshot nightly): one at a time; ask again once it ended if the cluster still needs it',
    });
    expect(d.context.recovery?.requestID).toBe('r1');
  });
});
