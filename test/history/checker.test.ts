/**
 * The history checker against histories whose verdict is known: a linearizable one (every kind
 * of call, concurrent calls, an unknown outcome a later read saw and one nobody saw), and ones
 * that break a guarantee each: a stale read, a lost write, a compare-and-swap that succeeded
 * twice, revisions out of real-time order, and a watcher that missed, repeated or reordered events.
 */
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { checkHistory, type Verdict } from './checker.ts';
import type { History, Input, Operation, Output, Watch, WatchEvent } from './history.ts';

const kept: string[] = [];
afterEach(() => {
  for (const dir of kept.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Checks a history, removing what the checker kept after the test. */
async function check(history: History): Promise<Verdict> {
  const verdict = await checkHistory(history, 60);
  if (verdict.dir) kept.push(verdict.dir);
  return verdict;
}

const op = (client: number, call: number, ret: number, input: Input, output: Output | null): Operation => ({
  client,
  call,
  return: ret,
  input,
  output,
  ...(output ? {} : { error: 'DEADLINE_EXCEEDED' }),
});
const put = (key: string, value: string, lease?: string): Input => ({
  type: 'put',
  key,
  value,
  ...(lease ? { lease } : {}),
});
const get = (key: string): Input => ({ type: 'get', key });
const read = (revision: number, value?: string, modRevision?: number): Output =>
  value === undefined ? { revision } : { revision, kv: { value, modRevision: modRevision ?? revision } };
const ev = (key: string, modRevision: number, value?: string): WatchEvent =>
  value === undefined
    ? { type: 'delete', key, modRevision, at: 1000 + modRevision }
    : { type: 'put', key, value, modRevision, at: 1000 + modRevision };
const watch = (watcher: number, events: WatchEvent[], complete = true, startRevision = 2): Watch => ({
  watcher,
  client: 10 + watcher,
  prefix: '/',
  startRevision,
  events,
  resumes: 0,
  complete,
});

/** Every kind of call, concurrent ones, and two unknown outcomes: one a read saw, one nobody saw. */
const linearizable: History = {
  operations: [
    op(0, 0, 10, put('k', 'a'), { revision: 2 }),
    op(1, 5, 15, get('k'), read(2, 'a', 2)),
    op(1, 20, 30, { type: 'txn', key: 'k', compare: { modRevision: 2 }, value: 'b' }, { revision: 3, succeeded: true }),
    op(0, 25, 40, get('k'), read(3, 'b', 3)),
    op(0, 45, 50, { type: 'txn', key: 'k', compare: { value: 'b' }, value: 'c' }, { revision: 4, succeeded: true }),
    op(
      1,
      55,
      60,
      { type: 'txn', key: 'k', compare: { modRevision: 3 }, value: 'd' },
      { ...read(4, 'c', 4), succeeded: false },
    ),
    op(0, 65, 70, { type: 'delete', key: 'k' }, { revision: 5, deleted: 1, kv: { value: 'c', modRevision: 4 } }),
    op(1, 75, 80, get('k'), read(5)),
    op(0, 85, 90, { type: 'leaseGrant', key: 'l' }, { revision: 5, lease: '7' }),
    op(0, 95, 100, put('l', 'e', '7'), { revision: 6 }),
    op(1, 105, 110, get('l'), read(6, 'e', 6)),
    op(0, 115, 120, { type: 'leaseRevoke', key: 'l', lease: '7' }, { revision: 7 }),
    op(1, 125, 130, get('l'), read(7)),
    op(1, 135, 136, put('k', 'x'), null),
    op(0, 140, 150, get('k'), read(8, 'x', 8)),
    op(0, 155, 156, put('k', 'never-seen'), null),
  ],
  watches: [0, 1].map((w) =>
    watch(w, [
      ev('k', 2, 'a'),
      ev('k', 3, 'b'),
      ev('k', 4, 'c'),
      ev('k', 5),
      ev('l', 6, 'e'),
      ev('l', 7),
      ev('k', 8, 'x'),
    ]),
  ),
};

/** Two puts on k acknowledged one after the other. */
const twoPuts = [op(0, 0, 10, put('k', 'a'), { revision: 2 }), op(0, 20, 30, put('k', 'b'), { revision: 3 })];

describe('history checker', () => {
  beforeAll(() => binary('history-checker'), 600_000);

  it('finds a history of every kind of call linearizable, its watches whole', async () => {
    const v = await check(linearizable);
    expect(v).toMatchObject({ linearizable: 'Ok', ok: true, exitCode: 0, revisionViolations: [] });
    expect(v.watch).toMatchObject({ watchers: 2, complete: 2, events: 14, violations: [] });
    // The unknown put nobody saw is left out; the one a read saw is checked.
    expect([v.operations, v.checked, v.unknownOutcome, v.dropped]).toEqual([16, 15, 2, 1]);
  });

  it('finds a stale read: the older value read after a newer one was acknowledged', async () => {
    const v = await check({ operations: [...twoPuts, op(1, 40, 50, get('k'), read(3, 'a', 2))], watches: [] });
    expect([v.linearizable, v.ok, v.exitCode]).toEqual(['Illegal', false, 1]);
    expect(v.visualization).toBe(path.join(v.dir ?? '', 'violation.html'));
    expect(readFileSync(v.visualization ?? '', 'utf8')).toContain('<html');
  });

  it('finds a lost write: an acknowledged put that a later read does not see', async () => {
    const v = await check({
      operations: [op(0, 0, 10, put('k', 'a'), { revision: 2 }), op(1, 20, 30, get('k'), read(2))],
      watches: [],
    });
    expect([v.linearizable, v.ok]).toEqual(['Illegal', false]);
  });

  it('finds a compare-and-swap that succeeded twice on the same mod revision', async () => {
    const cas = (client: number, call: number, value: string, revision: number): Operation =>
      op(
        client,
        call,
        call + 10,
        { type: 'txn', key: 'k', compare: { modRevision: 2 }, value },
        { revision, succeeded: true },
      );
    const after = await check({ operations: [twoPuts[0]!, cas(0, 20, 'b', 3), cas(1, 40, 'c', 4)], watches: [] });
    expect(after.linearizable).toBe('Illegal');
    const concurrent = await check({ operations: [twoPuts[0]!, cas(0, 20, 'b', 3), cas(1, 22, 'c', 4)], watches: [] });
    expect(concurrent.linearizable).toBe('Illegal');
  });

  it('finds a read of a value before the call that wrote it, even one of unknown outcome', async () => {
    const v = await check({
      operations: [op(0, 0, 10, get('k'), read(3, 'x', 3)), op(1, 20, 21, put('k', 'x'), null)],
      watches: [],
    });
    expect([v.linearizable, v.unknownOutcome, v.dropped]).toEqual(['Illegal', 1, 0]);
  });

  it('finds a key read back after its lease was revoked', async () => {
    const v = await check({
      operations: [
        op(0, 0, 10, { type: 'leaseGrant', key: 'l' }, { revision: 1, lease: '9' }),
        op(0, 20, 30, put('l', 'e', '9'), { revision: 2 }),
        op(0, 40, 50, { type: 'leaseRevoke', key: 'l', lease: '9' }, { revision: 3 }),
        op(0, 60, 70, get('l'), read(3, 'e', 2)),
      ],
      watches: [],
    });
    expect(v.linearizable).toBe('Illegal');
  });

  it('finds revisions out of real-time order across keys, which each key alone does not show', async () => {
    const v = await check({
      operations: [
        op(0, 0, 10, put('k1', 'a'), { revision: 5 }),
        op(1, 20, 30, put('k2', 'b'), { revision: 4 }),
        op(2, 40, 50, put('k3', 'c'), { revision: 5 }),
      ],
      watches: [],
    });
    expect(v.linearizable).toBe('Ok');
    expect(v.revisionViolations).toHaveLength(3);
    expect(v.revisionViolations.join('\n')).toMatch(/two writes at revision 5/);
    expect(v.ok).toBe(false);
  });

  it('finds a watcher that missed an acknowledged write, repeated an event or delivered one out of order', async () => {
    const ops = [...twoPuts, op(0, 40, 50, put('k', 'c'), { revision: 4 })];
    const v = await check({
      operations: ops,
      watches: [
        watch(0, [ev('k', 2, 'a'), ev('k', 4, 'c')]),
        watch(1, [ev('k', 2, 'a'), ev('k', 3, 'b'), ev('k', 3, 'b'), ev('k', 4, 'c')]),
        watch(2, [ev('k', 3, 'b'), ev('k', 2, 'a'), ev('k', 4, 'c')]),
        // Not waited for, so only its own range counts: 3 is inside it.
        watch(3, [ev('k', 2, 'a'), ev('k', 4, 'c')], false),
      ],
    });
    expect(v.linearizable).toBe('Ok');
    expect(v.watch.violations).toEqual([
      'watcher 0: the event at revision 3 on k was not delivered (start 2, 0 resumes)',
      'watcher 1: event 2 (k at revision 3) delivered twice',
      'watcher 2: event 1 at revision 2 after one at 3',
      'watcher 3: the event at revision 3 on k was not delivered (start 2, 0 resumes)',
    ]);
    expect(v.exitCode).toBe(1);
  });

  it('finds an event for a value no call wrote, or at another revision than acknowledged', async () => {
    const v = await check({
      operations: twoPuts,
      watches: [watch(0, [ev('k', 2, 'a'), ev('k', 3, 'zz')]), watch(1, [ev('k', 2, 'a'), ev('k', 4, 'b')])],
    });
    expect(v.watch.violations.join('\n')).toMatch(/which no operation wrote/);
    expect(v.watch.violations.join('\n')).toMatch(/puts "b" at revision 4, acknowledged at 3/);
  });

  it('refuses a history it cannot read', async () => {
    await expect(
      checkHistory({ operations: [op(0, 0, 1, { type: 'scan' } as unknown as Input, null)], watches: [] }),
    ).rejects.toThrow(/unknown type "scan"/);
  });
});
