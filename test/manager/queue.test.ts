import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../manager/queue.ts';

const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('work queue', () => {
  it('runs a key added many times before it starts once', async () => {
    const runs: string[] = [];
    const q = new WorkQueue((key) => (runs.push(key), tick(5)), { concurrency: 1 });
    q.add('busy');
    for (let i = 0; i < 5; i++) q.add('a');
    q.add('b');
    await q.idle();
    expect(runs).toEqual(['busy', 'a', 'b']);
  });

  it('never works one key twice at once: a key added while running runs once more afterwards', async () => {
    let inFlight = 0;
    let most = 0;
    let runs = 0;
    let release!: () => void;
    const q = new WorkQueue(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      runs++;
      if (runs === 1) await new Promise<void>((r) => (release = r));
      inFlight--;
    });
    q.add('a');
    await tick();
    q.add('a');
    q.add('a');
    release();
    await q.idle();
    expect(most).toBe(1);
    expect(runs).toBe(2);
  });

  it('works different keys side by side, up to the concurrency', async () => {
    let inFlight = 0;
    let most = 0;
    const q = new WorkQueue(
      async () => {
        most = Math.max(most, ++inFlight);
        await tick(5);
        inFlight--;
      },
      { concurrency: 2 },
    );
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    await q.idle();
    expect(most).toBe(2);
  });

  it('retries a failing key with doubling back-off and reports each failure', async () => {
    const at: number[] = [];
    const failures: number[] = [];
    const q = new WorkQueue(
      () => {
        at.push(Date.now());
        return at.length < 3 ? Promise.reject(new Error('not yet')) : Promise.resolve();
      },
      { baseRetryMs: 20, onError: (_, __, attempt) => failures.push(attempt) },
    );
    q.add('a');
    while (at.length < 3) await tick(5);
    await q.idle();
    expect(failures).toEqual([1, 2]);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(19);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(39);
  });

  it('addAfter keeps the earliest timer for a key', async () => {
    const runs: number[] = [];
    const q = new WorkQueue(() => (runs.push(Date.now()), Promise.resolve()));
    const start = Date.now();
    q.addAfter('a', 200);
    q.addAfter('a', 10);
    q.addAfter('a', 100);
    while (runs.length === 0) await tick(5);
    expect(runs[0]! - start).toBeLessThan(100);
    await tick(250);
    expect(runs).toHaveLength(1);
    await q.stop();
  });

  it('takes no keys once stopped', async () => {
    const runs: string[] = [];
    const q = new WorkQueue((key) => (runs.push(key), Promise.resolve()));
    q.addAfter('late', 10);
    await q.stop();
    q.add('a');
    await tick(30);
    expect(runs).toEqual([]);
  });
});
