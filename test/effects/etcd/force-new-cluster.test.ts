/**
 * What a recovery from a lost quorum relies on, against real etcd processes: without a leader the
 * probe reports each answering member's applied index and revision (what the survivor is chosen
 * by), and a member started once with --force-new-cluster, then plainly, is a cluster of one with
 * its data, its member ID and the cluster ID, which a learner then joins as any other.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { probeCluster } from '../../../effects/etcd/index.ts';
import { until } from '../../../localcluster/until.ts';
import { joinMember, LocalEtcd } from './local-etcd.ts';

const local = new LocalEtcd('force-new-cluster');
afterAll(() => local.stop());

describe('etcd: recovery from a lost quorum with --force-new-cluster', () => {
  it('the probe names the survivor by its progress; forced once, then plain, it keeps data and IDs, and grows again', async () => {
    await local.startSeed('m0');
    await joinMember(local, 'm1');
    await joinMember(local, 'm2');
    const client = local.clients.member(local.ref, 'm0');
    for (let i = 0; i < 50; i++) await client.put(`key/${i}`).value(`v${i}`);
    const before = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
    expect(before.progress).toBeUndefined();
    const m0 = before.members.find((m) => m.name === 'm0')!.id;

    // Two members gone for good: killed, their data removed.
    for (const m of ['m1', 'm2']) {
      await local.kill(m);
      rmSync(local.dataDir(m), { recursive: true, force: true });
    }
    const lost = await until('no leader', async () => {
      const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(5_000));
      return seen.leader === null ? seen : undefined;
    });
    expect(lost.healthy).toEqual([m0]);
    expect(lost.progress?.[m0]?.revision).toBe(Number((await client.maintenance.status()).header.revision));
    expect(lost.progress?.[m0]?.applied).toBeGreaterThan(50);

    // Forced once: a cluster of one, the same member and cluster IDs.
    await local.kill('m0', 'SIGTERM');
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing', undefined, ['--force-new-cluster']);
    const forced = await until('m0 leads alone', async () => {
      const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(5_000));
      return seen.leader === m0 ? seen : undefined;
    });
    expect(forced.members.map((m) => m.id)).toEqual([m0]);
    expect(forced.clusterID).toBe(before.clusterID);

    // Then plain: still alone, the data whole, and a learner joins it.
    await local.kill('m0', 'SIGTERM');
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing');
    const kv = await local.clients.member(local.ref, 'm0').getAll().prefix('key/').strings();
    expect(Object.keys(kv)).toHaveLength(50);
    await joinMember(local, 'm3');
    const grown = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
    expect(grown.members.filter((m) => !m.learner)).toHaveLength(2);
    expect(grown.clusterID).toBe(before.clusterID);
  });
});
