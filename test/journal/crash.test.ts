import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import { currentWriter } from '../../journal/writerLease.ts';
import { WriterProcess, demo, step, tempDb } from './helpers.ts';

const children: WriterProcess[] = [];
function writer(db: string): WriterProcess {
  const w = new WriterProcess(db);
  children.push(w);
  return w;
}
afterEach(() => {
  for (const w of children.splice(0))
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
});

// Child Node processes on a busy 2-core machine: a generous bound, not a timed assertion.
describe('journal: crashes and the one-writer rule', { timeout: 30_000 }, () => {
  test('an intent written by a manager killed with SIGKILL before its effect is open after reopening, with its params', async () => {
    const db = tempDb();
    const w = writer(db);
    expect(await w.next()).toMatchObject({ ready: true });
    await w.send({ op: 'step', ref: demo, step: step('Pending', 'Bootstrapping', [{ type: 'noop' }]) });
    await w.send({ op: 'outcome', ref: demo, intentId: 'uid-demo:1:0', outcome: { ok: true } });
    const intents = [
      { type: 'createMember', params: { member: 'demo-0', peerURL: 'http://demo-0.demo.default.svc:2380' } },
      { type: 'createService', params: { name: 'demo' } },
    ];
    expect(
      await w.crash({ op: 'step', ref: demo, step: step('Bootstrapping', 'Bootstrapping', intents), thenKill: true }),
    ).toBe('SIGKILL');

    // A reader (the CLI, run to see what happened) finds them before any manager restarts.
    const reader = Journal.open(db, { readonly: true });
    expect(reader.openIntents().map((o) => o.id)).toEqual(['uid-demo:2:0', 'uid-demo:2:1']);
    reader.close();
    const j = Journal.open(db);
    try {
      expect(j.openIntents()).toMatchObject([
        { id: 'uid-demo:2:0', ref: demo, seq: 2, type: 'createMember', params: intents[0]?.params },
        { id: 'uid-demo:2:1', ref: demo, seq: 2, type: 'createService', params: { name: 'demo' } },
      ]);
      expect(j.snapshot(demo.uid)).toMatchObject({ seq: 2, stage: 'Bootstrapping' });
      // Recovery answers each one; the object then has nothing left to recover.
      j.recordOutcome(demo, 'uid-demo:2:0', { ok: true, result: { recovered: true } });
      j.recordOutcome(demo, 'uid-demo:2:1', { ok: false, code: 'ERR_CREATE_SERVICE', message: 'forbidden' });
      expect(j.openIntents(demo.uid)).toEqual([]);
      expect(j.recordStep(demo, step('Bootstrapping', 'Steady')).seq).toBe(3);
    } finally {
      j.close();
    }
  });

  test('a writer SIGKILLed at random instants leaves only whole steps, and the next writer carries on', async () => {
    const db = tempDb();
    let before = 0;
    for (let round = 0; round < 5; round++) {
      const w = writer(db);
      expect(await w.next()).toMatchObject({ ready: true });
      expect(await w.send({ op: 'loop', ref: demo })).toEqual({ looping: true });
      // Kill it at a random instant once it has written at least one step of its own.
      const reader = Journal.open(db, { readonly: true });
      while ((reader.snapshot(demo.uid)?.seq ?? 0) <= before) await sleep(1);
      reader.close();
      await sleep(Math.random() * 30);
      w.child.kill('SIGKILL');
      expect(await w.exited).toBe('SIGKILL');

      const j = Journal.open(db);
      try {
        const rows = j.timeline({ uid: demo.uid });
        const bySeq = Map.groupBy(rows, (r) => r.seq);
        for (const [seq, step] of bySeq) {
          const kinds = step.filter((r) => r.entry !== 'outcome').map((r) => r.entry);
          expect(kinds, `step ${seq}`).toEqual(['event', 'transition', 'intent', 'intent', 'intent']);
        }
        const lastSeq = Math.max(...bySeq.keys());
        expect(lastSeq).toBeGreaterThan(before);
        before = lastSeq + 1;
        expect(j.snapshot(demo.uid)?.seq).toBe(lastSeq);
        const answered = new Set(rows.filter((r) => r.entry === 'outcome').map((r) => r.intentId));
        const unanswered = rows.filter((r) => r.entry === 'intent' && !answered.has(r.intentId)).map((r) => r.intentId);
        expect(j.openIntents(demo.uid).map((o) => o.id)).toEqual(unanswered);
        for (const o of j.openIntents(demo.uid)) j.recordOutcome(demo, o.id, { ok: true, result: { recovered: true } });
        const probes = [0, 1, 2].map((n) => ({ type: 'probe', params: { n } }));
        expect(j.recordStep(demo, step('Steady', 'Steady', probes)).seq).toBe(lastSeq + 1);
      } finally {
        j.close();
      }
    }
  });

  test('a second writer is refused while the first lives, and takes over once the first is killed', async () => {
    const db = tempDb();
    const first = writer(db);
    const { pid } = await first.next();
    expect(() => Journal.open(db)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_LOCKED', holderPid: pid }));
    const second = writer(db);
    expect(await second.next()).toEqual({ error: 'ERR_JOURNAL_LOCKED' });
    // Readers are never refused.
    Journal.open(db, { readonly: true }).close();

    expect(await first.crash({ op: 'kill' })).toBe('SIGKILL');
    const j = Journal.open(db);
    try {
      expect(j.recordStep(demo, step('Pending', 'Bootstrapping')).seq).toBe(1);
    } finally {
      j.close();
    }
  });

  test('a writer closed cleanly lets the next one in at once', () => {
    const db = tempDb();
    Journal.open(db).close();
    const again = Journal.open(db);
    expect(() => Journal.open(db)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_LOCKED' }));
    again.close();
  });

  test("a lease whose pid now names another process, or that was taken before the machine's last boot, is stale", () => {
    const db = tempDb();
    Journal.open(db).close();
    const me = currentWriter();
    const leave = (pid: number, startTicks: string | null, bootId: string) => {
      const raw = new Database(db);
      raw
        .prepare(`INSERT OR REPLACE INTO writer VALUES (1, ?, ?, ?, 'elsewhere', '2026-01-01T00:00:00Z')`)
        .run(pid, startTicks, bootId);
      raw.close();
    };
    // This test's own pid, as left by this very process: a live holder.
    leave(me.pid, me.startTicks, me.bootId);
    expect(() => Journal.open(db)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_LOCKED' }));
    // The same pid, but a process that started at another time: the pid was reused.
    leave(me.pid, '1', me.bootId);
    Journal.open(db).close();
    // The same pid and start time, but before a reboot.
    leave(me.pid, me.startTicks, 'another-boot');
    Journal.open(db).close();
  });

  test('a writer whose lease was taken from it refuses to write', () => {
    const db = tempDb();
    const j = Journal.open(db);
    try {
      const raw = new Database(db);
      raw.prepare('UPDATE writer SET pid = pid + 1').run();
      raw.close();
      expect(() => j.recordStep(demo, step('Pending', 'Bootstrapping'))).toThrow(
        expect.objectContaining({ code: 'ERR_JOURNAL_LEASE_LOST' }),
      );
      expect(j.timeline({ uid: demo.uid })).toEqual([]);
    } finally {
      j.close();
    }
  });

  test('a reader sees each new step while another process is still writing', async () => {
    const db = tempDb();
    const w = writer(db);
    await w.next();
    const reader = Journal.open(db, { readonly: true });
    try {
      for (let i = 1; i <= 5; i++) {
        await w.send({ op: 'step', ref: demo, step: step(`S${i - 1}`, `S${i}`, [{ type: 'tick', params: { i } }]) });
        expect(reader.snapshot(demo.uid)?.seq).toBe(i);
        expect(reader.openIntents().map((o) => o.params)).toHaveLength(i);
      }
      expect(reader.timeline({ uid: demo.uid }, { afterSeq: 4 }).map((r) => r.entry)).toEqual([
        'event',
        'transition',
        'intent',
      ]);
    } finally {
      reader.close();
    }
  });
});
