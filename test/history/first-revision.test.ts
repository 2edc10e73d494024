import type { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { firstRevision } from './traffic.ts';

/** A client whose status call is refused (a Service without a ready endpoint) or answers at `revision`. */
function client(revision: number | null, closed: string[], name: string): Etcd3 {
  return {
    maintenance: {
      status: () =>
        revision === null
          ? Promise.reject(new Error('14 UNAVAILABLE: No connection established. connect ECONNREFUSED'))
          : Promise.resolve({ header: { revision: String(revision) } }),
    },
    close: () => void closed.push(name),
  } as unknown as Etcd3;
}

describe('firstRevision: a traffic start through the client Service', () => {
  it('waits out refused connections, closing each, and keeps the one that answered', async () => {
    const closed: string[] = [];
    let n = 0;
    const got = await firstRevision(() => {
      n++;
      return Promise.resolve(client(n < 3 ? null : 42, closed, `c${n}`));
    }, 10_000);
    expect(got.revision).toBe(42);
    expect(n).toBe(3);
    expect(closed).toEqual(['c1', 'c2']);
  });

  it('throws the last refusal once its budget is spent', async () => {
    const closed: string[] = [];
    await expect(firstRevision(() => Promise.resolve(client(null, closed, 'c')), 600)).rejects.toThrow(/ECONNREFUSED/);
    expect(closed.length).toBeGreaterThan(1);
  });
});
