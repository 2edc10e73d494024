/**
 * A cluster born on etcd 3.5, restarted on 3.6 and then on 3.7, as a roll takes its members:
 * etcd 3.7 replays a member's raft log from its last snapshot on disk and cannot read the
 * entries 3.5 wrote there, so it panics unless the log was flushed to a snapshot on 3.6 first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flushRaftLog } from '../../../effects/etcd/flush-raft-log.ts';
import { etcdBinary, joinMember, LocalEtcd } from './local-etcd.ts';

/** --snapshot-count of the members: small, so that a flush is 101 entries. */
const SNAPSHOT_COUNT = 100;

/** A one-member cluster born on 3.5.35 with keys, then restarted on 3.6.16. */
async function bornOn35(name: string): Promise<LocalEtcd> {
  const local = new LocalEtcd(name, '3.5.35', { flags: [`--snapshot-count=${SNAPSHOT_COUNT}`] });
  await local.startSeed('m0');
  const kv = local.clients.member(local.ref, 'm0');
  for (let i = 0; i < 20; i++) await kv.put(`key-${i}`).value(`value-${i}`).exec();
  await restartOn(local, '3.6.16');
  return local;
}

async function restartOn(local: LocalEtcd, version: string, member = 'm0'): Promise<void> {
  await local.kill(member, 'SIGTERM');
  await local.start(member, `${member}=${local.peerURL(member)}`, 'new', etcdBinary(version));
}

describe('flushRaftLog: a cluster born on 3.5 restarts on 3.7', { timeout: 120_000 }, () => {
  let local: LocalEtcd | undefined;
  afterEach(async () => {
    await local?.stop();
    local = undefined;
  });

  it('without a flush, etcd 3.7.3 panics replaying the entries 3.5 wrote', async () => {
    local = await bornOn35('flush-none');
    await expect(restartOn(local, '3.7.3')).rejects.toThrow(/etcd m0 exited/);
    const log = readFileSync(path.join(local.dir, 'm0.log'), 'utf8');
    expect(log).toContain('unmarshal should never fail');
  });

  it('after a flush of --snapshot-count + 1 empty entries on 3.6.16, 3.7.3 starts with every key', async () => {
    local = await bornOn35('flush-done');
    const kv = local.clients.member(local.ref, 'm0');
    const revision = Number((await kv.get('key-0').exec()).header.revision);
    expect(await flushRaftLog.run({ entries: SNAPSHOT_COUNT + 1, version: '3.7.3' }, local.ctx())).toEqual({
      entries: SNAPSHOT_COUNT + 1,
    });
    // The entries wrote nothing: no key, no revision.
    expect(Number((await kv.get('key-0').exec()).header.revision)).toBe(revision);
    await restartOn(local, '3.7.3');
    const status = await local.clients.member(local.ref, 'm0').maintenance.status();
    expect(status.version).toBe('3.7.3');
    expect(await kv.getAll().prefix('key-').count()).toBe(20);
    expect(await kv.get('key-19').string()).toBe('value-19');
  });

  it('on three members, each restarted on 3.7.3 at once after the flush, one at a time, as a roll does', async () => {
    local = new LocalEtcd('flush-three', '3.5.35', { flags: [`--snapshot-count=${SNAPSHOT_COUNT}`] });
    await local.startSeed('m0');
    await joinMember(local, 'm1');
    await joinMember(local, 'm2');
    for (const m of ['m0', 'm1', 'm2']) await restartOn(local, '3.6.16', m);
    await flushRaftLog.run({ entries: SNAPSHOT_COUNT + 1, version: '3.7.3' }, local.ctx());
    for (const m of ['m0', 'm1', 'm2']) {
      await restartOn(local, '3.7.3', m);
      expect((await local.clients.member(local.ref, m).maintenance.status()).version).toBe('3.7.3');
    }
  });
});
