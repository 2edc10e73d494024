import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import { MIGRATIONS, SCHEMA_VERSION } from '../../journal/schema.ts';
import { currentWriter } from '../../journal/writerLease.ts';
import { demo, member, step, tempDb } from './helpers.ts';

const open: Journal[] = [];
function journal(path = tempDb(), opts?: Parameters<typeof Journal.open>[1]): Journal {
  const j = Journal.open(path, opts);
  open.push(j);
  return j;
}
afterEach(() => {
  for (const j of open.splice(0)) j.close();
});

describe('journal: steps', () => {
  test('a step comes back as event, transition and intents, in order, with deterministic intent ids', () => {
    const j = journal();
    const first = j.recordStep(
      demo,
      step('Pending', 'Bootstrapping', [
        { type: 'createMember', params: { member: 'demo-0' } },
        { type: 'createService' },
      ]),
    );
    const second = j.recordStep(
      demo,
      step('Bootstrapping', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-1' } }]),
    );
    expect(first).toEqual({ seq: 1, intentIds: ['uid-demo:1:0', 'uid-demo:1:1'] });
    expect(second).toEqual({ seq: 2, intentIds: ['uid-demo:2:0'] });
    const rows = j.timeline({ uid: demo.uid });
    expect(rows.map((r) => [r.seq, r.entry, r.name])).toEqual([
      [1, 'event', 'k8s.cluster.updated'],
      [1, 'transition', 'cluster'],
      [1, 'intent', 'createMember'],
      [1, 'intent', 'createService'],
      [2, 'event', 'k8s.cluster.updated'],
      [2, 'transition', 'cluster'],
      [2, 'intent', 'createMember'],
    ]);
    expect(rows[1]).toMatchObject({ from: 'Pending', to: 'Bootstrapping' });
    expect(rows[2]).toMatchObject({ intentId: 'uid-demo:1:0', data: { member: 'demo-0' } });
    expect(j.timeline({ namespace: 'default', name: 'demo' }, { afterSeq: 1 }).map((r) => r.seq)).toEqual([2, 2, 2]);
  });

  test('recordStep is atomic: a step whose second intent cannot be serialised leaves no row at all', () => {
    const j = journal();
    j.recordStep(demo, step('Pending', 'Bootstrapping'));
    const poisoned = {
      get member(): string {
        throw new Error('params getter failed');
      },
    };
    const bad = step('Bootstrapping', 'Steady', [
      { type: 'createMember', params: { member: 'demo-0' } },
      { type: 'createMember', params: poisoned },
    ]);
    expect(() => j.recordStep(demo, bad)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_WRITE' }));
    expect(j.timeline({ uid: demo.uid }).map((r) => r.seq)).toEqual([1, 1]);
    expect(j.openIntents()).toEqual([]);
    expect(j.snapshot(demo.uid)).toMatchObject({ seq: 1, stage: 'Bootstrapping' });
    // The sequence number the failed step would have taken is still free.
    expect(j.recordStep(demo, step('Bootstrapping', 'Steady')).seq).toBe(2);
  });

  test('a step numbered at or below the last one is refused; a higher forced number is kept', () => {
    const j = journal();
    j.recordStep(demo, { ...step('Pending', 'Bootstrapping'), seq: 41 });
    expect(() => j.recordStep(demo, { ...step('a', 'b'), seq: 41 })).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_SEQUENCE' }),
    );
    expect(j.recordStep(demo, step('Bootstrapping', 'Steady', [{ type: 'noop' }]))).toEqual({
      seq: 42,
      intentIds: ['uid-demo:42:0'],
    });
    expect(j.timeline({ uid: demo.uid }).map((r) => r.seq)).toEqual([41, 41, 42, 42, 42]);
  });

  test('a uid recorded as one kind cannot be written as the other', () => {
    const j = journal();
    j.recordStep(demo, step('Pending', 'Bootstrapping'));
    expect(() => j.recordStep({ ...demo, kind: 'EtcdMember' }, step('a', 'b'))).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_REF' }),
    );
  });

  test('the snapshot holds the latest machine state, stage and step number', () => {
    const j = journal();
    j.recordStep(demo, step('Pending', 'Bootstrapping'));
    j.recordStep(demo, step('Bootstrapping', 'Steady'));
    expect(j.snapshot(demo.uid)).toMatchObject({
      ref: demo,
      machine: 'cluster',
      stage: 'Steady',
      seq: 2,
      state: { value: 'Steady', context: { replicas: 3 } },
    });
    expect(j.snapshot('no-such-uid')).toBeUndefined();
    j.recordStep(member(0), step('pending', 'bootstrapping', [{ type: 'createPod' }]));
    expect(j.objects().map((o) => o.ref)).toEqual([demo, member(0)]);
    expect(j.stats()).toMatchObject({ objects: 2, rows: 7, openIntents: 1 });
  });

  test("the event's time is the caller's, the row's write time is the journal's", () => {
    const j = journal();
    const before = new Date().toISOString();
    j.recordStep(demo, step('Pending', 'Bootstrapping', [], '2020-01-02T03:04:05.678Z'));
    const [event] = j.timeline({ uid: demo.uid });
    expect(event?.at).toBe('2020-01-02T03:04:05.678Z');
    expect(event!.writtenAt >= before).toBe(true);
    expect(() => j.recordStep(demo, step('a', 'b', [], 'yesterday'))).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_WRITE' }),
    );
    // The machines stamp events in epoch milliseconds.
    j.recordStep(demo, {
      ...step('a', 'b'),
      event: { type: 'timer.tick', at: Date.parse('2026-11-21T12:00:00.250Z') },
    });
    expect(j.timeline({ uid: demo.uid }, { afterSeq: 1 })[0]?.at).toBe('2026-11-21T12:00:00.250Z');
  });

  test('a nested xstate state value is recorded as a dotted state name', () => {
    const j = journal();
    j.recordStep(demo, {
      ...step('Pending', 'x'),
      from: 'pending',
      to: { bootstrapping: { seeding: 'awaitingSeed' } },
    });
    j.recordStep(demo, {
      ...step('x', 'y'),
      from: { bootstrapping: { seeding: 'awaitingSeed' } },
      to: { steady: {}, probing: 'idle' },
    });
    const transitions = j.timeline({ uid: demo.uid }).filter((r) => r.entry === 'transition');
    expect(transitions.map((r) => [r.from, r.to])).toEqual([
      ['pending', 'bootstrapping.seeding.awaitingSeed'],
      ['bootstrapping.seeding.awaitingSeed', 'steady, probing.idle'],
    ]);
    expect(j.snapshot(demo.uid)?.stage).toBe('steady, probing.idle');
  });
});

describe('journal: outcomes', () => {
  test('an outcome closes its intent; a second outcome for it is ignored and the first stands', () => {
    const j = journal();
    const { intentIds } = j.recordStep(
      demo,
      step('Pending', 'Bootstrapping', [
        { type: 'createMember', params: { member: 'demo-0' } },
        { type: 'createService' },
      ]),
    );
    expect(j.openIntents().map((i) => i.id)).toEqual(intentIds);
    expect(j.recordOutcome(demo, 'uid-demo:1:0', { ok: true, result: { uid: 'm0' } })).toEqual({
      recorded: true,
      ok: true,
    });
    expect(j.openIntents().map((i) => i.id)).toEqual(['uid-demo:1:1']);
    expect(j.recordOutcome(demo, 'uid-demo:1:0', { ok: false, code: 'ERR_X', message: 'late' })).toEqual({
      recorded: false,
      ok: true,
    });
    expect(j.recordOutcome(demo, 'uid-demo:1:1', { ok: false, code: 'ERR_CREATE', message: 'forbidden' })).toEqual({
      recorded: true,
      ok: false,
    });
    expect(j.openIntents()).toEqual([]);
    const outcomes = j.timeline({ uid: demo.uid }).filter((r) => r.entry === 'outcome');
    expect(outcomes).toMatchObject([
      { intentId: 'uid-demo:1:0', name: 'createMember', ok: true, data: { uid: 'm0' }, seq: 1 },
      { intentId: 'uid-demo:1:1', name: 'createService', ok: false, code: 'ERR_CREATE', message: 'forbidden' },
    ]);
  });

  test('a failure retrying cannot fix reads back as such; one without the flag is stored and read as every failure was before', () => {
    const path = tempDb();
    const j = journal(path);
    j.recordStep(demo, step('Pending', 'Bootstrapping', [{ type: 'createMember' }, { type: 'createService' }]));
    j.recordOutcome(demo, 'uid-demo:1:0', {
      ok: false,
      code: 'ERR_RESTORE',
      message: 'no such snapshot',
      retryable: false,
    });
    j.recordOutcome(demo, 'uid-demo:1:1', { ok: false, code: 'ERR_CREATE', message: 'forbidden', retryable: true });
    const [permanent, retryable] = j.timeline({ uid: demo.uid }).filter((r) => r.entry === 'outcome');
    expect(permanent).toMatchObject({ ok: false, code: 'ERR_RESTORE', retryable: false });
    expect(permanent).not.toHaveProperty('data');
    expect(retryable).not.toHaveProperty('retryable');
    expect(retryable).not.toHaveProperty('data');
    // The retryable one is stored as failures always were (no data), so older files read as they did.
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare(`SELECT intent_id, data FROM entries WHERE entry = 'outcome' ORDER BY lsn`).all()).toEqual([
      { intent_id: 'uid-demo:1:0', data: '{"retryable":false}' },
      { intent_id: 'uid-demo:1:1', data: null },
    ]);
    raw.close();
  });

  test("an outcome for an unknown intent, or for another object's intent, is refused", () => {
    const j = journal();
    j.recordStep(demo, step('Pending', 'Bootstrapping', [{ type: 'createMember' }]));
    expect(() => j.recordOutcome(demo, 'uid-demo:9:0', { ok: true })).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_UNKNOWN_INTENT' }),
    );
    expect(() => j.recordOutcome(member(0), 'uid-demo:1:0', { ok: true })).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_REF' }),
    );
    expect(j.openIntents()).toHaveLength(1);
  });

  test('open intents are listed oldest first, for every object or for one', () => {
    const j = journal();
    j.recordStep(demo, step('Pending', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }]));
    j.recordStep(member(0), step('pending', 'bootstrapping', [{ type: 'createPod', params: { member: 'demo-0' } }]));
    j.recordStep(
      demo,
      step('Bootstrapping', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-1' } }]),
    );
    expect(j.openIntents().map((i) => i.id)).toEqual(['uid-demo:1:0', 'uid-demo-0:1:0', 'uid-demo:2:0']);
    expect(j.openIntents(member(0).uid)).toMatchObject([
      { id: 'uid-demo-0:1:0', ref: member(0), seq: 1, index: 0, type: 'createPod', params: { member: 'demo-0' } },
    ]);
  });
});

describe('journal: objects gone from Kubernetes', () => {
  test('forget deletes an object and its rows once its intents are answered, and leaves others alone', () => {
    const j = journal();
    j.recordStep(demo, step('Pending', 'Bootstrapping'));
    j.recordStep(member(0), step('pending', 'removing', [{ type: 'removeMember', params: { member: 'demo-0' } }]));
    expect(() => j.forget(member(0).uid)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_OPEN_INTENTS' }));
    j.recordOutcome(member(0), 'uid-demo-0:1:0', { ok: true });
    expect(j.forget(member(0).uid)).toBe(4);
    expect(j.snapshot(member(0).uid)).toBeUndefined();
    expect(j.objects().map((o) => o.ref.uid)).toEqual([demo.uid]);
    expect(j.timeline({ uid: demo.uid })).toHaveLength(2);
  });
});

describe('journal: files', () => {
  test('a reader cannot write, and a missing file is a clear error', () => {
    const path = tempDb();
    journal(path).recordStep(demo, step('Pending', 'Bootstrapping'));
    const reader = journal(path, { readonly: true });
    expect(reader.readonly).toBe(true);
    expect(() => reader.recordStep(demo, step('a', 'b'))).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_READONLY' }),
    );
    expect(() => Journal.open(`${path}.missing`, { readonly: true })).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_NOT_FOUND' }),
    );
  });

  test('a file that is not a journal is refused with ERR_JOURNAL_OPEN, by writers and readers', () => {
    const path = tempDb();
    writeFileSync(path, 'this is not a SQLite database, just some text long enough to have a header'.repeat(10));
    expect(() => Journal.open(path)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_OPEN' }));
    expect(() => Journal.open(path, { readonly: true })).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_OPEN' }));
  });

  test('a file of an older schema is upgraded by the next writer, keeping its open intents; a reader asks for that first', () => {
    const path = tempDb();
    const v1 = new Database(path);
    v1.pragma('journal_mode = WAL');
    v1.exec(MIGRATIONS[0] ?? '');
    v1.pragma('user_version = 1');
    const row = { uid: demo.uid, seq: 1, at: '2026-11-21T12:00:00.000Z' };
    v1.prepare(
      `INSERT INTO objects VALUES (@uid, 'EtcdCluster', 'default', 'demo', NULL, 'cluster', 'Bootstrapping', '{}', 1, @at, @at)`,
    ).run(row);
    v1.prepare(
      `INSERT INTO entries (uid, seq, entry, name, intent_id, data, at, written_at) VALUES (@uid, 1, 'intent', 'createMember', 'uid-demo:1:0', '{"member":"demo-0"}', @at, @at)`,
    ).run(row);
    v1.prepare(`INSERT INTO open_intents VALUES ('uid-demo:1:0', @uid, 1)`).run(row);
    v1.close();

    expect(() => Journal.open(path, { readonly: true })).toThrow('has schema version 1, this reader needs');
    const j = journal(path);
    expect(j.openIntents()).toMatchObject([{ id: 'uid-demo:1:0', params: { member: 'demo-0' } }]);
    // Migration 3 copies the objects table (for EtcdSnapshots): the object and its stage are kept.
    expect(j.objects().map((o) => [o.ref.kind, o.ref.name, o.stage])).toEqual([
      ['EtcdCluster', 'demo', 'Bootstrapping'],
    ]);
    const snap = {
      uid: 'uid-snap',
      kind: 'EtcdSnapshot',
      namespace: 'default',
      name: 'nightly',
      cluster: 'demo',
    } as const;
    expect(j.recordStep(snap, step('pending', 'taking', []))).toEqual({ seq: 1, intentIds: [] });
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: true, recovered: true });
    expect(j.timeline({ uid: demo.uid }).at(-1)).toMatchObject({ entry: 'outcome', recovered: true });
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    raw.close();
  });

  test('a newer writer refused by a live lease leaves an older file as it was', () => {
    const path = tempDb();
    const v1 = new Database(path);
    v1.exec(MIGRATIONS[0] ?? '');
    v1.pragma('user_version = 1');
    const me = currentWriter(); // stands for an older manager still writing
    v1.prepare(`INSERT INTO writer VALUES (1, ?, ?, ?, ?, '2026-01-01T00:00:00Z')`).run(
      me.pid,
      me.startTicks,
      me.bootId,
      me.host,
    );
    v1.close();
    expect(() => Journal.open(path)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_LOCKED' }));
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(1);
    raw.close();
  });

  test('a file written by a newer schema is refused, by writers and readers', () => {
    const path = tempDb();
    journal(path).close();
    const raw = new Database(path);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => Journal.open(path)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_SCHEMA' }));
    expect(() => Journal.open(path, { readonly: true })).toThrow(
      expect.objectContaining({ code: 'ERR_JOURNAL_SCHEMA' }),
    );
  });

  test('the file is in WAL mode with synchronous FULL unless asked otherwise', () => {
    const path = tempDb();
    journal(path).close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    expect(journal(path).settings()).toEqual({ journalMode: 'wal', synchronous: 'FULL' });
    expect(journal(tempDb(), { synchronous: 'NORMAL' }).settings()).toEqual({
      journalMode: 'wal',
      synchronous: 'NORMAL',
    });
  });
});
