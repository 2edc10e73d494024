/**
 * Real traffic on a real etcd process, recorded and checked: three clients and two watchers for
 * a few seconds, the member killed with SIGKILL and started again on its data in the middle (so
 * calls in flight have unknown outcomes and each watch must resume where it stopped), and the
 * history found linearizable with whole watches. The counts are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { checkHistory, describeVerdict } from './checker.ts';
import { HistoryTraffic } from './traffic.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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
  }, 60_000);
});
