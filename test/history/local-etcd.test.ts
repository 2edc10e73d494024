/**
 * Real traffic on a real etcd process, recorded and checked: three clients and two watchers for
 * a few seconds, the member killed with SIGKILL and started again on its data in the middle (so
 * calls in flight have unknown outcomes and each watch must resume where it stopped), and the
 * history found linearizable with whole watches. The counts are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { rmSync } from 'node:fs';
import { checkHistory, describeVerdict } from './checker.ts';
import type { History, Operation } from './history.ts';
import { HistoryTraffic } from './traffic.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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

describe('history checker on a real etcd', () => {
  let local: LocalEtcd;
  beforeAll(async () => {
    await binary('history-checker');
    local = new LocalEtcd('history');
    await local.startSeed('m0');
  }, 600_000);
  afterAll(() => local?.stop());

  it('finds real traffic linearizable and every watch whole across a kill -9 and restart of the member', async () => {
    const url = local.resolve(local.ref).clientURL('m0');
    const traffic = new HistoryTraffic({
      prefix: `/history-${Date.now()}`,
      connect: () => ({ hosts: [url], dialTimeout: 2_000 }),
      attemptMs: 1_000,
    });
    await traffic.start();
    let before: number;
    try {
      await sleep(2_500);
      before = traffic.counts().operations;
      await local.kill('m0');
      await local.start('m0', `m0=${local.peerURL('m0')}`, 'new');
      await sleep(2_500);
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
});
