/**
 * A new cluster started whole, against real etcd processes, as the operator starts one: every
 * member with the same `--initial-cluster` (state new) and the cluster's UID as its token. Two of
 * three start the cluster, which lists the third from the start, by name, a voter with its ID
 * that does not answer;
 * the third, started late (its Pod slow, or its EtcdMember created after a crash), joins that same
 * cluster under that ID and reads what was written before it ran.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCluster } from '../../../effects/etcd/index.ts';
import type { EtcdObservation } from '../../../machines/types.ts';
import { LocalEtcd } from './local-etcd.ts';

const NAMES = ['whole-0', 'whole-1', 'whole-2'] as const;

describe('a new cluster started whole, on real etcd', { timeout: 120_000 }, () => {
  const local = new LocalEtcd('whole');
  let initialCluster = '';
  const probe = () => probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
  /** Probes until `healthy` members answer. */
  async function answering(healthy: number): Promise<EtcdObservation> {
    for (let tries = 1; ; tries++) {
      const seen = await probe().catch(() => null);
      if (seen && seen.healthy.length >= healthy) return seen;
      if (tries > 300) throw new Error(`fewer than ${healthy} members healthy: ${JSON.stringify(seen)}`);
      await delay(100);
    }
  }
  let before: EtcdObservation;
  beforeAll(async () => {
    const pairs: string[] = [];
    for (const n of NAMES) pairs.push(`${n}=${await local.allocate(n)}`);
    initialCluster = pairs.join(',');
  });
  afterAll(() => local.stop());

  it('a quorum of the initial cluster starts it; the member not started is listed as an unstarted voter', async () => {
    await Promise.all(NAMES.slice(0, 2).map((n) => local.start(n, initialCluster, 'new')));
    before = await answering(2);
    expect(before.members).toHaveLength(3);
    const late = before.members.find((m) => m.peerURL === local.peerURL('whole-2'));
    // Named from the start: etcd knows every name of an initial cluster (a learner added later has none until it runs).
    expect(late).toMatchObject({ name: 'whole-2', learner: false });
    expect(before.healthy).not.toContain(late?.id);
    await local.clients.cluster(local.ref).put('before-whole-2').value('v');
  });

  it('the member started late joins the same cluster under the ID listed for it, with the data written before', async () => {
    await local.start('whole-2', initialCluster, 'new');
    const after = await answering(3);
    expect(after.clusterID).toBe(before.clusterID);
    const late = after.members.find((m) => m.peerURL === local.peerURL('whole-2'));
    expect(late?.id).toBe(before.members.find((m) => m.peerURL === local.peerURL('whole-2'))?.id);
    expect(late?.name).toBe('whole-2');
    // Read from the late member alone (serializable: its own copy of the log, once it caught up).
    const own = local.clients.member(local.ref, 'whole-2');
    let read: string | null = null;
    for (let tries = 0; read === null && tries < 100; tries++) {
      read = await own.get('before-whole-2').serializable(true).string();
      if (read === null) await delay(50);
    }
    expect(read).toBe('v');
  });
});
