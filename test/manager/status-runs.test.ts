import { describe, expect, it } from 'vitest';
import { peerURL } from '../../machines/policy.ts';
import type { MemberState } from '../../machines/member-state.ts';
import type { ClusterEvent } from '../../machines/types.ts';
import { at, bootstrap, claims, condition, ok, ref, type Recorder } from './cluster-recorder.ts';

const OLD = '3.5.35';
const NEW = '3.6.16';
const MiB = 2 ** 20;
const id = (n: number): string => `a${n}`;

/** etcd's list of voters 0..n-1; a member at null does not answer (so reports no version). */
const etcdAt = (versions: readonly (string | null)[], leader = 0, sizes?: Record<number, number>): ClusterEvent => ({
  type: 'etcd.members.listed',
  at: at(),
  etcd: {
    clusterID: 'c1',
    members: versions.map((_, n) => ({
      id: id(n),
      name: `demo-${n}`,
      peerURL: peerURL(ref, `demo-${n}`),
      learner: false,
    })),
    healthy: versions.flatMap((v, n) => (v === null ? [] : [id(n)])),
    leader: id(leader),
    versions: Object.fromEntries(versions.flatMap((v, n) => (v === null ? [] : [[id(n), v]]))),
    ...(sizes
      ? {
          sizes: Object.fromEntries(
            Object.entries(sizes).map(([n, mib]) => [id(Number(n)), { dbSize: mib * MiB, dbSizeInUse: 10 * MiB }]),
          ),
        }
      : {}),
  },
});
/** The EtcdMembers at these versions, voters unless `states` says otherwise. */
const membersAt = (versions: readonly string[], states: Record<number, MemberState> = {}): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: at(),
  members: versions.map((version, n) => ({
    name: `demo-${n}`,
    ordinal: n,
    bootstrap: n === 0,
    dormant: false,
    state: states[n] ?? 'voter',
    deleting: false,
    version,
  })),
});
const specAt = (version: string, more: object = {}): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: at(),
  spec: { replicas: 3, version },
  progressDeadlineSeconds: 600,
  volumeSize: { quantity: '64Mi', bytes: 64 * MiB },
  ...more,
});
const claimsAt = (capacity: readonly (number | null)[], requested = capacity): ClusterEvent => ({
  type: 'k8s.claims.listed',
  at: at(),
  claims: capacity.map((mib, n) => ({
    member: `demo-${n}`,
    storageClass: 'local-sized',
    requested: (requested[n] ?? 0) * MiB,
    capacity: mib === null ? null : mib * MiB,
  })),
});

/** A steady 3-member cluster on 3.5.35, its claims at 64Mi, led by demo-0. */
function onOld(): Recorder {
  const r = bootstrap(3);
  r.send(specAt(OLD), membersAt([OLD, OLD, OLD]), claimsAt([64, 64, 64]), etcdAt([OLD, OLD, OLD]));
  expect(r.d.state).toBe('steady');
  return r;
}

/** Starts the roll to 3.6.16: demo-1 (a follower) first, back on it. */
function rollFirst(r: Recorder): void {
  r.send(specAt(NEW), ok('setMemberVersion'), membersAt([OLD, NEW, OLD]), etcdAt([OLD, NEW, OLD]));
  expect(r.d.state).toBe('observing');
}

/** Goes on with demo-2, then demo-0 (the leader, last) up to its version being set. */
function rollToLeader(r: Recorder): void {
  r.send(etcdAt([OLD, NEW, OLD]), ok('setMemberVersion'), membersAt([OLD, NEW, NEW]), etcdAt([OLD, NEW, NEW]));
  r.send(etcdAt([OLD, NEW, NEW]), ok('moveLeader', { leader: id(1) }), etcdAt([OLD, NEW, NEW], 1));
  r.send(ok('setMemberVersion'));
  expect(r.d.state).toBe('upgrading.awaitingMember');
}

describe('manager: step-end conditions say only what etcd and the claims show', () => {
  it('Upgraded reads False (Upgrading) while a roll runs, and True only once etcd answers from every member with the version', () => {
    const r = onOld();
    rollFirst(r);
    expect(condition(r.status, 'Upgraded')).toMatchObject({
      status: 'False',
      reason: 'Upgrading',
      message: 'upgrading to etcd 3.6.16: 1 of 3 members answer with it; not yet: demo-0, demo-2',
    });
    rollToLeader(r);
    // Every EtcdMember set to 3.6.16, the last restarting (etcd has no answer from it): still an upgrade.
    r.send(membersAt([NEW, NEW, NEW]), etcdAt([null, NEW, NEW], 1));
    expect(r.d.state).toBe('upgrading.awaitingMember');
    expect(r.status?.observed?.step).toBe('Upgrading');
    expect(condition(r.status, 'Upgraded')).toMatchObject({ status: 'False', reason: 'Upgrading' });
    r.send(etcdAt([NEW, NEW, NEW], 1), etcdAt([NEW, NEW, NEW], 1));
    expect(r.d.state).toBe('steady');
    // Every status that claimed it was written with etcd answering 3.6.16 from all three.
    expect(claims(r, 'Upgraded').length).toBeGreaterThan(0);
    expect(new Set(claims(r, 'Upgraded').map((x) => x.status.members?.map((m) => m.version).join()))).toEqual(
      new Set([[NEW, NEW, NEW].join()]),
    );
    expect(condition(r.status, 'Upgraded')).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: 'every member runs etcd 3.6.16',
    });
  });

  it('a roll down a minor reads Downgrading, through etcd downgrade, until etcd answers from every member with the older version', () => {
    const r = bootstrap(3);
    r.send(specAt(NEW), membersAt([NEW, NEW, NEW]), claimsAt([64, 64, 64]), etcdAt([NEW, NEW, NEW]));
    expect(r.d.state).toBe('steady');
    r.send(specAt(OLD));
    expect(r.d.state).toBe('upgrading.enablingDowngrade.running');
    // The Step column and Progressing say Downgrading, never Upgrading, while the roll goes down.
    expect(r.status?.observed?.step).toBe('Downgrading');
    expect(condition(r.status, 'Progressing')).toMatchObject({ status: 'True', reason: 'Downgrading' });
    expect(condition(r.status, 'Upgraded')).toMatchObject({
      status: 'False',
      reason: 'Downgrading',
      message:
        "downgrading to etcd 3.5.35 (etcd's downgrade to 3.5): 0 of 3 members answer with it; not yet: demo-0, demo-1, demo-2",
    });
    r.send(ok('enableDowngrade', { enabled: true }), ok('setMemberVersion'), membersAt([NEW, OLD, NEW]));
    r.send(etcdAt([NEW, OLD, NEW]));
    expect(r.d.state).toBe('observing');
    expect(condition(r.status, 'Upgraded')).toMatchObject({
      status: 'False',
      reason: 'Downgrading',
      message:
        "downgrading to etcd 3.5.35 (etcd's downgrade to 3.5): 1 of 3 members answer with it; not yet: demo-0, demo-2",
    });
    r.send(etcdAt([NEW, OLD, NEW]), ok('setMemberVersion'), membersAt([NEW, OLD, OLD]), etcdAt([NEW, OLD, OLD]));
    r.send(etcdAt([NEW, OLD, OLD]), ok('moveLeader', { leader: id(1) }), etcdAt([NEW, OLD, OLD], 1));
    r.send(ok('setMemberVersion'));
    expect(r.d.state).toBe('upgrading.awaitingMember');
    expect(r.status?.observed?.step).toBe('Downgrading');
    r.send(membersAt([OLD, OLD, OLD]));
    // Every EtcdMember is set to 3.5.35; etcd does not answer from demo-0 with it yet: still down.
    expect(condition(r.status, 'Upgraded')).toMatchObject({ status: 'False', reason: 'Downgrading' });
    r.send(etcdAt([OLD, OLD, OLD], 1), etcdAt([OLD, OLD, OLD], 1));
    expect(r.d.state).toBe('steady');
    expect(condition(r.status, 'Upgraded')).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: 'every member runs etcd 3.5.35',
    });
  });

  it('a roll whose last member is lost on its way up is not Upgraded until its replacement answers with the version', () => {
    const r = onOld();
    rollFirst(r);
    rollToLeader(r);
    // demo-0's Pod restarts on 3.6.16 on an emptied volume: it is to be replaced, and etcd has no answer from it.
    r.send(membersAt([NEW, NEW, NEW], { 0: 'replacing' }), etcdAt([null, NEW, NEW], 1));
    expect(r.d.state).not.toMatch(/^upgrading/);
    expect(claims(r, 'Upgraded')).toEqual([]);
    expect(condition(r.status, 'Upgraded')).toMatchObject({
      status: 'False',
      reason: 'Upgrading',
      message: 'upgrading to etcd 3.6.16: 2 of 3 members answer with it; not yet: demo-0',
    });
  });

  it('a roll onto new CAs alone (the same version) reads RollingCA and leaves Upgraded as it was, a member restarting too', () => {
    const r = onOld();
    rollFirst(r);
    rollToLeader(r);
    r.send(membersAt([NEW, NEW, NEW]), etcdAt([NEW, NEW, NEW], 1), etcdAt([NEW, NEW, NEW], 1));
    expect(condition(r.status, 'Upgraded')).toMatchObject({ status: 'True' });
    /** The EtcdMembers on 3.6.16, each one's spec.trust and the trust its Pod was made with. */
    const trusted = (trusts: readonly string[], pods = trusts): ClusterEvent => ({
      type: 'k8s.members.listed',
      at: at(),
      members: [0, 1, 2].map((n) => ({
        name: `demo-${n}`,
        ordinal: n,
        bootstrap: n === 0,
        dormant: false,
        state: 'voter',
        deleting: false,
        version: NEW,
        trust: trusts[n],
        podTrust: pods[n],
      })),
    });
    r.send(
      trusted(['a', 'a', 'a']),
      specAt(NEW, { spec: { replicas: 3, version: NEW, trust: 'a' } }),
      etcdAt([NEW, NEW, NEW], 1),
    );
    expect(r.d.state).toBe('steady');
    const before = condition(r.status, 'Upgraded');
    const mark = r.seen.length;
    r.send(specAt(NEW, { spec: { replicas: 3, version: NEW, trust: 'b' } }), etcdAt([NEW, NEW, NEW], 1));
    expect(r.d.state).toBe('upgrading.settingVersion.running');
    // The Step column and Progressing say what runs: a roll onto new CAs, not an upgrade.
    expect(r.status?.observed?.step).toBe('RollingCA');
    expect(condition(r.status, 'Progressing')).toMatchObject({ status: 'True', reason: 'RollingCA' });
    // demo-0 restarts onto the new CAs: etcd has no answer from it meanwhile, and no version moves.
    r.send(ok('setMemberVersion'), trusted(['b', 'a', 'a'], ['a', 'a', 'a']), etcdAt([null, NEW, NEW], 1));
    expect(r.d.state).toBe('upgrading.awaitingMember');
    expect(r.status?.observed?.step).toBe('RollingCA');
    r.send(trusted(['b', 'a', 'a']), etcdAt([NEW, NEW, NEW], 1));
    expect(r.d.state).toBe('observing');
    // Upgraded said the same in every status written meanwhile.
    expect(r.seen.slice(mark).map((x) => condition(x.status, 'Upgraded'))).toEqual(
      r.seen.slice(mark).map(() => before),
    );
  });

  it('raising storage.size turns VolumesExpanded False (ResizingVolumes) until every claim shows it, an unbound one included', () => {
    const r = onOld();
    const sized = (mib: number): ClusterEvent =>
      specAt(OLD, { volumeSize: { quantity: `${mib}Mi`, bytes: mib * MiB } });
    r.send(sized(128), ok('growVolume', { patched: true }), ok('growVolume', { patched: true }));
    r.send(ok('growVolume', { patched: true }), claimsAt([128, 128, 128]));
    expect(condition(r.status, 'VolumesExpanded')).toMatchObject({ status: 'True', reason: 'Completed' });

    r.send(sized(256));
    expect(r.d.state).toMatch(/^resizingVolumes/);
    // The last size's True is not left standing while the claims grow to the new one.
    expect(condition(r.status, 'VolumesExpanded')).toMatchObject({ status: 'False', reason: 'ResizingVolumes' });
    r.send(
      ok('growVolume', { patched: true }),
      ok('growVolume', { patched: true }),
      ok('growVolume', { patched: true }),
    );
    // demo-2's claim was made again (its member replaced) and is not bound yet: it shows no size.
    r.send(claimsAt([256, 256, null], [256, 256, 256]));
    expect(r.d.state).not.toMatch(/^resizingVolumes/);
    expect(condition(r.status, 'VolumesExpanded')).toMatchObject({
      status: 'False',
      reason: 'ResizingVolumes',
      message: 'growing volumes to 256Mi: demo-0 done, demo-1 done',
    });
    r.send(claimsAt([256, 256, 256]));
    expect(condition(r.status, 'VolumesExpanded')).toMatchObject({
      status: 'True',
      message: "every member's volume claim shows 256Mi: demo-0 done, demo-1 done, demo-2 done",
    });
  });

  it('a defragmentation run that passed over a member still in the cluster is Defragmented False (Incomplete), naming it', () => {
    const r = onOld();
    const maintenance = {
      defrag: { schedule: null, timeZone: null, fragmentedBytes: 64 * MiB, fragmentedPercent: null },
      quotaBytes: null,
    };
    const fragmented = { 0: 200, 1: 200, 2: 200 };
    r.send(specAt(OLD, { maintenance }), etcdAt([OLD, OLD, OLD], 0, fragmented));
    expect(r.d.state).toBe('defragmenting.running.running');
    r.send(ok('defragment', { member: 'demo-1', freed: 100 * MiB }), etcdAt([OLD, OLD, OLD], 0, { 0: 200, 2: 200 }));
    r.send(ok('defragment', { member: 'demo-2', freed: 100 * MiB }), etcdAt([OLD, OLD, OLD], 0, { 0: 200 }));
    // demo-0 leads: leadership moves off it first, and the list that follows no longer has it
    // (removed from etcd by hand, its EtcdMember still there): it is passed over.
    r.send(etcdAt([OLD, OLD, OLD], 0, { 0: 200 }), ok('moveLeader', { leader: id(1) }));
    expect(r.d.state).toBe('defragmenting.awaitingLeader');
    r.send({
      type: 'etcd.members.listed',
      at: at(),
      etcd: {
        clusterID: 'c1',
        members: [1, 2].map((n) => ({
          id: id(n),
          name: `demo-${n}`,
          peerURL: peerURL(ref, `demo-${n}`),
          learner: false,
        })),
        healthy: [id(1), id(2)],
        leader: id(1),
        versions: { [id(1)]: OLD, [id(2)]: OLD },
      },
    });
    expect(r.d.context.defrag ?? null).toBeNull();
    expect(claims(r, 'Defragmented')).toEqual([]);
    expect(condition(r.status, 'Defragmented')).toMatchObject({
      status: 'False',
      reason: 'Incomplete',
      message: expect.stringMatching(/; not defragmented: demo-0 \(etcd did not list it at its turn\)$/) as string,
    });
  });
});
