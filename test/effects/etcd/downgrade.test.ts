/**
 * etcd's downgrade through the handlers, on real etcd processes: enableDowngrade brings the cluster
 * and storage versions down to the previous minor, after which each member restarts on it one at
 * a time with every key; etcd refuses a target that is not the minor below; cancelDowngrade ends
 * a downgrade so the cluster version follows its members up again.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { cancelDowngrade, clusterVersions, enableDowngrade } from '../../../effects/etcd/downgrade.ts';
import { EffectError } from '../../../effects/types.ts';
import { etcdBinary, joinMember, LocalEtcd } from './local-etcd.ts';

async function restartOn(local: LocalEtcd, version: string, member: string): Promise<void> {
  await local.kill(member, 'SIGTERM');
  await local.start(member, `${member}=${local.peerURL(member)}`, 'existing', etcdBinary(version));
}

/** A cluster of `n` members on `version`, with 20 keys. */
async function cluster(name: string, version: string, n: number): Promise<LocalEtcd> {
  const local = new LocalEtcd(name, version);
  await local.startSeed('m0');
  for (let i = 1; i < n; i++) await joinMember(local, `m${i}`);
  // Through the seed: a member just promoted may still answer as a learner for a moment.
  const kv = local.clients.member(local.ref, 'm0');
  for (let i = 0; i < 20; i++) await kv.put(`key-${i}`).value(`value-${i}`).exec();
  return local;
}

/** Waits until every member reports `cluster` as the cluster version. */
async function clusterVersionIs(local: LocalEtcd, cluster: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { members } = await clusterVersions(local.ctx());
    if (members.every((m) => m.cluster === cluster)) return;
    await delay(100);
  }
  throw new Error(`cluster version never became ${cluster}`);
}

describe('enableDowngrade and cancelDowngrade on real etcd', { timeout: 180_000 }, () => {
  let local: LocalEtcd | undefined;
  afterEach(async () => {
    await local?.stop();
    local = undefined;
  });

  it('3.6.16 -> 3.5.35: cluster and storage versions come down, then each member restarts on 3.5.35 with every key', async () => {
    local = await cluster('down-36', '3.6.16', 3);
    expect(await enableDowngrade.recover({ version: '3.5.35' }, local.ctx())).toEqual({ done: false });
    const result = await enableDowngrade.run({ version: '3.5.35' }, local.ctx(60_000));
    expect(result.enabled).toBe(true);
    expect(result.silent).toEqual([]);
    expect(result.members.map((m) => [m.server, m.cluster, m.storage])).toEqual(
      Array.from({ length: 3 }, () => ['3.6.16', '3.5.0', '3.5.0']),
    );
    // Found done after a restart of the manager, and run again it asks nothing more.
    expect(await enableDowngrade.recover({ version: '3.5.35' }, local.ctx())).toMatchObject({ done: true });
    expect((await enableDowngrade.run({ version: '3.5.35' }, local.ctx())).enabled).toBe(false);
    for (const m of ['m0', 'm1', 'm2']) {
      await restartOn(local, '3.5.35', m);
      expect((await local.clients.member(local.ref, m).maintenance.status()).version).toBe('3.5.35');
      expect(await local.clients.member(local.ref, m).get('key-19').string()).toBe('value-19');
    }
    // etcd ends the downgrade itself once every member runs the target: nothing left to cancel.
    for (let i = 0; i < 100 && (await cancelDowngrade.run({ version: '3.5.35' }, local.ctx())).cancelled; i++)
      await delay(200);
    expect(await cancelDowngrade.run({ version: '3.5.35' }, local.ctx())).toEqual({ cancelled: false });
    expect(await local.clients.cluster(local.ref).getAll().prefix('key-').count()).toBe(20);
  });

  it('3.7.3 -> 3.6.16: 3.6 refuses 3.7 data until the downgrade brought the storage version down', async () => {
    local = await cluster('down-37', '3.7.3', 1);
    await expect(restartOn(local, '3.6.16', 'm0')).rejects.toThrow(/etcd m0 exited/);
    expect(readFileSync(path.join(local.dir, 'm0.log'), 'utf8')).toMatch(/not supported/);
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing', etcdBinary('3.7.3'));
    const result = await enableDowngrade.run({ version: '3.6.16' }, local.ctx(60_000));
    expect(result.members.map((m) => [m.cluster, m.storage])).toEqual([['3.6.0', '3.6.0']]);
    await restartOn(local, '3.6.16', 'm0');
    expect((await local.clients.member(local.ref, 'm0').maintenance.status()).version).toBe('3.6.16');
    expect(await local.clients.cluster(local.ref).getAll().prefix('key-').count()).toBe(20);
  });

  it('is refused, saying why, when the target is not the minor below the cluster version', async () => {
    local = await cluster('down-refused', '3.7.3', 1);
    const refused = await enableDowngrade.run({ version: '3.5.35' }, local.ctx()).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(EffectError);
    expect(refused).toMatchObject({ code: 'ERR_DOWNGRADE_REFUSED', retryable: true });
    expect((refused as Error).message).toContain("etcd's cluster version is 3.7");
    expect((await clusterVersions(local.ctx())).members[0]).toMatchObject({ cluster: '3.7.0', storage: '3.7.0' });
  });

  it('a downgrade undone: cancelled, the member back on 3.6, the cluster version goes back to 3.6', async () => {
    local = await cluster('down-undone', '3.6.16', 3);
    await enableDowngrade.run({ version: '3.5.35' }, local.ctx(60_000));
    await restartOn(local, '3.5.35', 'm0');
    expect(await cancelDowngrade.run({ version: '3.6.16' }, local.ctx())).toEqual({ cancelled: true });
    await restartOn(local, '3.6.16', 'm0');
    await clusterVersionIs(local, '3.6.0');
    const { members } = await clusterVersions(local.ctx());
    expect(members.map((m) => [m.server, m.storage])).toEqual(Array.from({ length: 3 }, () => ['3.6.16', '3.6.0']));
  });
});
