import { describe, expect, it } from 'vitest';
import { Serial } from './informer.ts';

describe('serial reconcile', () => {
  it('kicks during a run coalesce into one more run', async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const serial = new Serial(
      async () => {
        runs++;
        if (runs === 1) await new Promise<void>((r) => (release = r));
      },
      () => undefined,
    );
    const first = serial.kick();
    void serial.kick();
    void serial.kick();
    release();
    await first;
    expect(runs).toBe(2);
    await serial.close();
  });

  it('a failed run is retried without a new kick, until it succeeds', async () => {
    let runs = 0;
    const logs: string[] = [];
    let succeeded: () => void = () => undefined;
    const done = new Promise<void>((r) => (succeeded = r));
    const serial = new Serial(
      () => {
        runs++;
        if (runs < 3) return Promise.reject(new Error(`attempt ${runs} failed`));
        succeeded();
        return Promise.resolve();
      },
      (line) => logs.push(line),
    );
    await serial.kick();
    await done;
    expect(runs).toBe(3);
    expect(logs[0]).toMatch(/attempt 1 failed; retrying/);
    await serial.close();
  });

  it('runs nothing after close', async () => {
    let runs = 0;
    const serial = new Serial(
      () => Promise.resolve(void runs++),
      () => undefined,
    );
    await serial.close();
    await serial.kick();
    expect(runs).toBe(0);
  });
});
