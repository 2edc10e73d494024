import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLearner, probeCluster } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd, retrying } from './local-etcd.ts';

const canonical = /^[1-9a-f][0-9a-f]*$/;

describe('probeCluster against a real etcd', { timeout: 60_000 }, () => {
  const local = new LocalEtcd('probe');
  let learnerID = '';
  let voterID = '';
  const probe = () => probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
  beforeAll(async () => {
    await local.startSeed('probe-0');
    voterID = (await joinMember(local, 'probe-1')).memberID;
  }, 60_000);
  afterAll(() => local.stop());

  it('shows a learner that has not started without a name and not healthy, then by name once it answers', async () => {
    const params = { member: 'probe-2', peerURL: await local.allocate('probe-2') };
    // etcd refuses a change until every voter has been connected for a while.
    const { result: added } = await retrying('ERR_ETCD_UNHEALTHY', () => addLearner.run(params, local.ctx()));
    learnerID = added.memberID;
    const before = await probe();
    // Not started: no name and no client URLs (`started` false), which only the member publishes.
    expect(before.members).toContainEqual({
      id: learnerID,
      name: '',
      peerURL: local.peerURL('probe-2'),
      learner: true,
      started: false,
    });
    expect(before.healthy).not.toContain(learnerID);
    // A learner that has not started says nothing of its progress.
    expect(before.learners).toBeUndefined();

    await local.start('probe-2', added.initialCluster, 'existing');
    const after = await probe();
    expect(after.clusterID).toMatch(canonical);
    expect(after.clusterID).toBe(before.clusterID);
    expect([...after.members].sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      {
        id: expect.stringMatching(canonical) as string,
        name: 'probe-0',
        peerURL: local.peerURL('probe-0'),
        learner: false,
        started: true,
      },
      { id: voterID, name: 'probe-1', peerURL: local.peerURL('probe-1'), learner: false, started: true },
      { id: learnerID, name: 'probe-2', peerURL: local.peerURL('probe-2'), learner: true, started: true },
    ]);
    expect([...after.healthy].sort()).toEqual(after.members.map((m) => m.id).sort());
    // The leader is a voter, and the started learner's progress is reported against it.
    expect(after.members.filter((m) => !m.learner).map((m) => m.id)).toContain(after.leader);
    // Each member that answers says which etcd it runs (the default of build.sh, 3.6.16).
    expect(after.versions).toEqual(Object.fromEntries(after.healthy.map((id) => [id, '3.6.16'])));
    expect(after.behind).toBeUndefined();
    // Each member that answers says how large its database is and how much of it holds data; no alarm is raised.
    expect(Object.keys(after.sizes ?? {}).sort()).toEqual([...after.healthy].sort());
    for (const size of Object.values(after.sizes ?? {})) expect(size.dbSizeInUse).toBeLessThanOrEqual(size.dbSize);
    expect(after.alarms).toBeUndefined();
    const progress = after.learners?.[learnerID];
    expect(progress?.leader).toBeGreaterThan(0);
    expect(progress?.applied).toBeGreaterThan(0);
  });

  it('a killed member is still listed but not healthy, even with quorum lost', async () => {
    await local.kill('probe-1');
    const seen = await probe();
    expect(seen.members.map((m) => m.id)).toContain(voterID);
    expect(seen.healthy).not.toContain(voterID);
    expect(seen.healthy).toHaveLength(2);
  });

  it('with every member down the cluster is reported unavailable', async () => {
    await Promise.all(['probe-0', 'probe-2'].map((m) => local.kill(m)));
    await expect(probe()).rejects.toMatchObject({ code: 'ERR_ETCD_UNAVAILABLE', retryable: true });
  });
});
