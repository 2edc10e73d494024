import { describe, expect, it } from 'vitest';
import { CrashBackoff } from './backoff.ts';

describe('crash-loop back-off', () => {
  it('restarts a first crash at once, then waits 10s, 20s, 40s... up to 5 minutes', () => {
    const b = new CrashBackoff();
    let now = 0;
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const wait = b.delay(now);
      waits.push(wait);
      now += wait;
      b.restarted(now);
      now += 1000; // the container crashes a second after each start
    }
    expect(waits).toEqual([0, 9000, 19000, 39000, 79000, 159000, 299000, 299000]);
  });

  it('forgets the back-off after ten quiet minutes', () => {
    const b = new CrashBackoff();
    b.restarted(0);
    b.restarted(1000);
    expect(b.currentMs).toBe(20_000);
    b.restarted(1000 + 601_000);
    expect(b.currentMs).toBe(10_000);
  });
});
