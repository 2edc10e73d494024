/**
 * Real traffic on a real etcd process, recorded and checked: three clients and two watchers for
 * a few seconds, the member killed with SIGKILL and started again on its data in the middle (so
 * calls in flight have unknown outcomes and each watch must resume where it stopped), and the
 * history found linearizable with whole watches. Then a rollback in place: a snapshot under the
 * traffic, more writes, the member's data replaced by the snapshot restored as the operator
 * restores it (revisions bumped, marked compacted) and started again on the same address; the
 * history, told of the rollback, passes as two epochs, and fails as one. The counts are printed.
 */
import { createWriteStream, rmSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot, type SnapshotInfo } from '../../effects/etcd/snapshot.ts';
import { BUMP_REVISION } from '../../machines/policy.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { binary, run } from '../../localcluster/controlplane/tools.ts';
import { until } from '../../localcluster/until.ts';
import { checkHistory, describeVerdict } from './checker.ts';
import type { History, Operation } from './history.ts';
import { HistoryTraffic } from './traffic.ts';

/**
 * The history with one read made stale: a get that saw a write acknowledged before it was
 * called now answers the value of an acknowledged put on that key from before that write.
 */
function withStaleRead(h: History): History {
  const ops = [...h.operations];
  const acked = (value: string) => ops.find((o) => o.output && 'value' in o.input && o.input.value === value);
  for (let i = ops.length - 1; i >= 0; i--) {
    const g = ops[i]!;
    const seen = g.input.type === 'get' && g.output?.kv ? acked(g.output.kv.value) : undefined;
    if (!seen || seen.return >= g.call) continue;
    const old = ops.find(
      (o): o is Operation & { input: { value: string } } =>
        o.input.type === 'put' && o.input.key === g.input.key && !!o.output && o.return < seen.call,
    );
    if (!old) continue;
    ops[i] = { ...g, output: { ...g.output!, kv: { value: old.input.value, modRevision: old.output!.revision } } };
    return { ...h, operations: ops };
  }
  throw new Error('no read to make stale');
}

/**
 * Waits until `n` more of the traffic's operations than now have been answered: on a busy machine
 * the traffic is slow too, and a fixed sleep can pass with none (the rollback case below then had
 * no write after the snapshot to lose, and its history passed as one epoch).
 */
async function answeredMore(traffic: HistoryTraffic, n: number): Promise<void> {
  const answered = (): number => {
    const { operations, unknown } = traffic.counts();
    return operations - unknown;
  };
  const from = answered();
  await until(
    `${n} more operations answered`,
    () => Promise.resolve(answered() >= from + n ? true : undefined),
    30_000,
  );
}

describe('history checker on a real etcd', () => {
  let local: LocalEtcd;
  beforeAll(async () => {
    await binary('history-checker');
    local = new LocalEtcd('history');
    await local.startSeed('m0');
  }, 600_000);
  afterAll(() => local?.stop());

  /** Traffic on m0, on keys of its own, started. */
  async function recording(name: string): Promise<HistoryTraffic> {
    const url = local.resolve(local.ref).clientURL('m0');
    const traffic = new HistoryTraffic({
      prefix: `/${name}-${Date.now()}`,
      connect: () => ({ hosts: [url], dialTimeout: 2_000 }),
      attemptMs: 1_000,
    });
    await traffic.start();
    return traffic;
  }

  it('finds real traffic linearizable and every watch whole across a kill -9 and restart of the member', async () => {
    const traffic = await recording('history');
    let before: number;
    try {
      await answeredMore(traffic, 60);
      before = traffic.counts().operations;
      await local.kill('m0');
      await local.start('m0', `m0=${local.peerURL('m0')}`, 'new');
      await answeredMore(traffic, 60);
    } catch (err) {
      traffic.close();
      throw err;
    }
    expect(traffic.counts().operations).toBeGreaterThan(before);
    const history = await traffic.stop();
    const verdict = await checkHistory(history, 120);
    console.log(`history on a real etcd, kill -9 and restart of its member: ${describeVerdict(verdict)}`);
    expect(verdict).toMatchObject({ linearizable: 'Ok', revisionViolations: [], ok: true });
    expect(verdict.watch.violations).toEqual([]);
    expect(verdict.watch.resumes).toBeGreaterThanOrEqual(2);
    expect(history.watches.every((w) => w.complete)).toBe(true);
    expect(verdict.checked).toBeGreaterThan(100);
    // The same checks refuse it with one read made stale, or one event taken from a watcher.
    const stale = await checkHistory(withStaleRead(history), 120);
    const [w0, ...others] = history.watches;
    const gap = await checkHistory({ ...history, watches: [{ ...w0!, events: w0!.events.slice(1) }, ...others] }, 120);
    for (const v of [stale, gap]) if (v.dir) rmSync(v.dir, { recursive: true, force: true });
    expect(stale.linearizable).toBe('Illegal');
    expect([gap.linearizable, gap.watch.violations.length]).toEqual(['Ok', 1]);
  }, 60_000);

  it('finds real traffic across a rollback in place linearizable as two epochs, and not as one', async () => {
    const traffic = await recording('rollback');
    try {
      await answeredMore(traffic, 30);
      const info: SnapshotInfo = { bytes: 0 };
      const file = path.join(local.dir, 'rollback.db');
      await pipeline(readSnapshot(local.clients.member(local.ref, 'm0'), info), createWriteStream(file));
      // Writes acknowledged after the snapshot: the rollback loses them.
      await answeredMore(traffic, 30);
      // As the operator's seed restores it (effects/kubernetes/build-restore.ts), in m0's place.
      const asked = process.hrtime.bigint();
      await local.kill('m0');
      rmSync(local.dataDir('m0'), { recursive: true, force: true });
      const peer = local.peerURL('m0');
      await run(await binary('etcdutl'), [
        ...['snapshot', 'restore', file, '--data-dir', local.dataDir('m0'), '--name', 'm0'],
        ...['--initial-cluster', `m0=${peer}`, '--initial-advertise-peer-urls', peer],
        ...['--bump-revision', String(BUMP_REVISION), '--mark-compacted'],
      ]);
      await local.start('m0', `m0=${peer}`, 'new');
      traffic.rolledBack({ snapshotRevision: info.revision ?? 0, asked, answered: process.hrtime.bigint() });
      // Reads after it, which see the snapshot's values where those writes had been; and both
      // watches canceled and made again (a watch reconnects within its 1 s backoff, then is told
      // of the compaction: on a busy machine the 30 calls were once over before that).
      await answeredMore(traffic, 30);
      await until(
        'both watches canceled and made again',
        () => Promise.resolve(traffic.counts().canceled === 2 && traffic.counts().watching === 2 ? true : undefined),
        30_000,
      );
      await answeredMore(traffic, 10);
    } catch (err) {
      traffic.close();
      throw err;
    }
    const history = await traffic.stop();
    const verdict = await checkHistory(history, 120);
    console.log(`history on a real etcd across a rollback in place: ${describeVerdict(verdict)}`);
    expect(verdict).toMatchObject({ linearizable: 'Ok', revisionViolations: [], ok: true });
    expect(verdict.watch.violations).toEqual([]);
    // Both watches were canceled by the compaction and made again in the new epoch, whole to the end.
    expect(history.watches.filter((w) => w.canceled)).toHaveLength(2);
    expect(history.watches.filter((w) => !w.canceled && w.complete && w.startRevision > BUMP_REVISION)).toHaveLength(2);
    expect(verdict.checked).toBeGreaterThan(100);
    // Writes were lost: as one history, it is not linearizable.
    const { rollback: _, ...asOne } = history;
    const one = await checkHistory(asOne, 120);
    if (one.dir) rmSync(one.dir, { recursive: true, force: true });
    expect(one.linearizable).toBe('Illegal');
  }, 60_000);
});
