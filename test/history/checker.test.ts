/**
 * The history checker against histories whose verdict is known: a linearizable one (every kind
 * of call, concurrent calls, an unknown outcome a later read saw and one nobody saw), and ones
 * that break a guarantee each: a stale read, a lost write, a compare-and-swap that succeeded
 * twice, revisions out of real-time order, and a watcher that missed, repeated or reordered events.
 * Then histories across a rollback in place (docs/reliability.md, "A rollback under the history"):
 * one that passes, with the writes after the snapshot lost and calls in flight across it, and ones
 * that break a rule each.
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
const ev = (key: string, modRevision: number, value?: string, at = 1000 + modRevision): WatchEvent =>
  value === undefined ? { type: 'delete', key, modRevision, at } : { type: 'put', key, value, modRevision, at };
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
      checkHistory({ ...rolledBack(), rollback: { snapshotRevision: 3, bump: B, asked: 200, answered: 100 } }),
    ).rejects.toThrow(/answered after asked/);
    await expect(
      checkHistory({ operations: [op(0, 0, 1, { type: 'scan' } as unknown as Input, null)], watches: [] }),
    ).rejects.toThrow(/unknown type "scan"/);
  });
});

const B = 1_000_000_000;

/**
 * A rollback to a snapshot whose status says revision 3 and that holds every write up to `held`
 * (3, or 4: a write made while the snapshot began), asked at 100 and answered at 200: k's puts
 * acknowledged past it (b unless held, c) are lost, j's before it is kept; a put called before the
 * rollback is answered by the new epoch, another of unknown outcome took effect there. Watcher 0's
 * watch is canceled by the compaction and made again in the new epoch; watcher 1's, which saw
 * nothing past the snapshot, goes on into the new epoch without a cancel.
 */
function rolledBack(held: 3 | 4 = 3): History {
  const at = (n: number) => B + held + n;
  return {
    operations: [
      op(0, 0, 10, put('k', 'a'), { revision: 2 }),
      op(1, 12, 14, put('j', 'x'), { revision: 3 }),
      op(0, 20, 30, put('k', 'b'), { revision: 4 }),
      op(1, 40, 50, get('k'), read(4, 'b', 4)),
      op(0, 60, 70, put('k', 'c'), { revision: 5 }),
      op(2, 90, 95, put('k', 'd'), null),
      op(2, 96, 97, put('p', 'g'), null),
      op(2, 150, 215, put('n', 'f'), { revision: at(1) }),
      op(1, 210, 220, get('k'), held === 3 ? read(at(0), 'a', 2) : read(at(0), 'b', 4)),
      op(1, 222, 224, get('j'), read(at(1), 'x', 3)),
      op(0, 230, 240, put('k', 'e'), { revision: at(2) }),
      op(1, 250, 260, get('k'), read(at(2), 'e')),
      op(1, 300, 310, get('p'), read(at(3), 'g')),
    ],
    watches: [
      {
        ...watch(0, [ev('k', 2, 'a', 11), ev('j', 3, 'x', 15), ev('k', 4, 'b', 31), ev('k', 5, 'c', 71)], false),
        canceled: { at: 205, reason: 'mvcc: required revision has been compacted' },
      },
      watch(0, [ev('n', at(1), 'f', 216), ev('k', at(2), 'e', 241), ev('p', at(3), 'g', 295)], true, at(1)),
      watch(1, [ev('k', 2, 'a', 11), ev('j', 3, 'x', 15), ev('n', at(1), 'f', 217), ev('k', at(2), 'e', 242)], false),
    ],
    rollback: { snapshotRevision: 3, bump: B, asked: 100, answered: 200 },
  };
}

/** rolledBack() with operation `i` answered `output`. */
const answered = (i: number, output: Output): History => {
  const h = rolledBack();
  return { ...h, operations: h.operations.map((o, j) => (j === i ? { ...o, output } : o)) };
};

/** rolledBack() with watcher 0's one watch delivering `events`, never canceled. */
const watched = (events: WatchEvent[]): History => ({
  ...rolledBack(),
  watches: [watch(0, events, false), ...rolledBack().watches.slice(2)],
});

describe('history checker, across a rollback in place', () => {
  beforeAll(() => binary('history-checker'), 600_000);

  it('passes the writes after the snapshot lost, the kept ones read back, calls in flight in either epoch', async () => {
    const v = await check(rolledBack());
    expect(v).toMatchObject({ linearizable: 'Ok', ok: true, revisionViolations: [] });
    expect(v.watch).toMatchObject({ watchers: 3, canceled: 1, violations: [] });
    expect(v.rollback).toEqual({ snapshotRevisionFrom: 3, snapshotRevisionUpTo: 3 });
    // The put in flight nobody saw is left out; the other, seen, is checked; the rollback is not counted.
    expect([v.operations, v.checked, v.unknownOutcome, v.dropped]).toEqual([13, 12, 2, 1]);
  });

  it('passes a snapshot holding a write made while it began: its revision bounded by the new epoch', async () => {
    const v = await check(rolledBack(4));
    expect([v.linearizable, v.ok, v.watch.violations]).toEqual(['Ok', true, []]);
    expect(v.rollback).toEqual({ snapshotRevisionFrom: 3, snapshotRevisionUpTo: 4 });
  });

  it('finds the rollback a lost write without the rollback said', async () => {
    const { rollback: _, ...plain } = rolledBack();
    expect((await check(plain)).linearizable).toBe('Illegal');
  });

  it('finds a write acknowledged after the snapshot read back after the rollback', async () => {
    const v = await check(answered(8, read(B + 3, 'c', 5)));
    expect([v.linearizable, v.ok]).toEqual(['Illegal', false]);
  });

  it('finds a key written before the snapshot missing after the rollback', async () => {
    const v = await check(answered(9, read(B + 4)));
    expect([v.linearizable, v.ok]).toEqual(['Illegal', false]);
  });

  it('finds the old epoch answering after the rollback was answered', async () => {
    const v = await check(answered(11, read(5, 'c', 5)));
    expect([v.linearizable, v.ok]).toEqual(['Illegal', false]);
  });

  it('finds a watch handing a revision lower than one it had handed, without a cancel', async () => {
    // After c at 5, the restored b at 4 (as a restore that bumped no revision would hand it).
    const v = await check(
      watched([ev('k', 2, 'a', 11), ev('j', 3, 'x', 15), ev('k', 5, 'c', 71), ev('k', 4, 'b', 210)]),
    );
    expect(v.linearizable).toBe('Ok');
    expect(v.watch.violations).toEqual([
      'watcher 0: event 3 at revision 4, of the epoch before the rollback, delivered after the rollback was answered',
      'watcher 0: event 3 at revision 4 after one at 5',
    ]);
    expect(v.ok).toBe(false);
  });

  it('finds a watch that handed a lost write going on into the new epoch without a cancel', async () => {
    const old = [ev('k', 2, 'a', 11), ev('j', 3, 'x', 15), ev('k', 4, 'b', 31), ev('k', 5, 'c', 71)];
    const v = await check(watched([...old, ev('n', B + 4, 'f', 216), ev('k', B + 5, 'e', 241)]));
    expect(v.watch.violations).toEqual([
      'watcher 0: event 2 at revision 4, of a write the rollback lost, then events of the new epoch without a cancel',
      'watcher 0: event 3 at revision 5, of a write the rollback lost, then events of the new epoch without a cancel',
    ]);
  });
});
