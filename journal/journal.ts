/**
 * The write-ahead journal: per object, the event a machine was fed, the transition it made,
 * the intents it emitted (durable before any effect runs) and each intent's outcome, plus
 * the object's latest machine state. One writer per file; any number of readers.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import {
  ENTRY_COLUMNS,
  failureData,
  isoTime,
  stateName,
  toOpenIntent,
  toOverview,
  toSnapshot,
  toTimelineRow,
} from './_rows.ts';
import { ENTRY, NONE, OVERVIEW, UPSERT_OBJECT, checkIntact, openFile, openReader, wrapOpen } from './_sqlite.ts';
import type { EntryRow, ObjectRow, OverviewRow } from './_rows.ts';
import { JournalError } from './errors.ts';
import { exactJson, redactText, redactedJson } from './redact.ts';
import { LEASE_VERSION, migrate } from './schema.ts';
import type * as T from './types.ts';
import type { JournalOptions, TimelineTarget } from './types.ts';
import { acquireLease, assertLease, currentWriter, releaseLease } from './writerLease.ts';
import type { WriterIdentity } from './writerLease.ts';

/** Default number of steps kept per object. */
export const DEFAULT_RETAIN_STEPS = 10_000;

/** A journal file, opened for writing (the manager) or reading (the CLI, debug pages). */
export class Journal {
  /** The file this journal reads and writes. */
  readonly path: string;
  /** True for a reader. */
  readonly readonly: boolean;
  readonly #db: Database.Database;
  readonly #retain: number;
  readonly #me: WriterIdentity | null;
  readonly #onWrite: JournalOptions['onWrite'];
  readonly #stmt: Map<string, Database.Statement> = new Map();
  readonly #watchers = new Set<(change: T.JournalChange) => void>();
  /** The lsns the write transaction in progress appended, first and last. */
  #appended: [number, number] | null = null;

  private constructor(path: string, db: Database.Database, me: WriterIdentity | null, options: JournalOptions) {
    this.path = path;
    this.#db = db;
    this.#me = me;
    this.readonly = me === null;
    this.#retain = options.retainSteps ?? DEFAULT_RETAIN_STEPS;
    this.#onWrite = options.onWrite;
  }

  /**
   * Opens (a writer creates and migrates) the file; a second live writer gets ERR_JOURNAL_LOCKED,
   * a file whose pages are not sound ERR_JOURNAL_DAMAGED (see openReplacingDamaged).
   */
  static open(path: string, options: JournalOptions = {}): Journal {
    const timeout = options.busyTimeoutMs ?? 5000;
    if (options.readonly) {
      return new Journal(path, openReader(path, timeout), null, options);
    }
    mkdirSync(dirname(path), { recursive: true });
    const db = openFile(path, { timeout });
    try {
      checkIntact(db, path);
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
      // Later migrations wait for the lease, so a newer manager never reshapes a file an older one still writes.
      migrate(db, path, LEASE_VERSION);
      const me = currentWriter();
      acquireLease(db, path, me);
      migrate(db, path);
      return new Journal(path, db, me, options);
    } catch (err) {
      db.close();
      throw wrapOpen(path, err);
    }
  }

  /** Appends one step (event, transition, intents) and the object's new state in ONE transaction. */
  recordStep(ref: T.ObjectRef, step: T.Step): T.RecordedStep {
    return this.#write(() => {
      const prev = this.#prep('SELECT kind, seq FROM objects WHERE uid = ?').get(ref.uid) as
        { kind: string; seq: number } | undefined;
      if (prev && prev.kind !== ref.kind) {
        throw new JournalError('ERR_JOURNAL_REF', `object ${ref.uid} is a ${prev.kind}, not a ${ref.kind}`);
      }
      const seq = step.seq ?? (prev?.seq ?? 0) + 1;
      if (!Number.isSafeInteger(seq) || seq <= (prev?.seq ?? 0)) {
        throw new JournalError('ERR_JOURNAL_SEQUENCE', `step ${seq} of ${ref.uid} is not after step ${prev?.seq ?? 0}`);
      }
      const { type, at, ...fields } = step.event;
      const base = {
        ...NONE,
        uid: ref.uid,
        seq,
        at: isoTime(at, `event ${type} time`),
        writtenAt: new Date().toISOString(),
      };
      const insert = (row: Record<string, unknown>) => this.#appendedAt(this.#prep(ENTRY).run(row).lastInsertRowid);
      insert({ ...base, entry: 'event', name: type, data: redactedJson(fields) });
      const [from, to] = [stateName(step.from), stateName(step.to)];
      insert({ ...base, entry: 'transition', name: step.machine, from, to });
      const intentIds = step.intents.map((intent, index) => {
        const intentId = `${ref.uid}:${seq}:${index}`;
        const data = exactJson(intent.params ?? {}, `intent ${intent.type} of step ${seq} of ${ref.kind}/${ref.name}`);
        const lsn = insert({ ...base, entry: 'intent', name: intent.type, intentId, data });
        this.#prep('INSERT INTO open_intents (intent_id, uid, lsn) VALUES (?, ?, ?)').run(intentId, ref.uid, lsn);
        return intentId;
      });
      this.#prep(UPSERT_OBJECT).run({
        ...base,
        kind: ref.kind,
        namespace: ref.namespace,
        name: ref.name,
        cluster: ref.cluster ?? null,
        machine: step.machine,
        stage: to,
        state: exactJson(step.state, `machine state after step ${seq} of ${ref.kind}/${ref.name}`),
      });
      return { seq, intentIds };
    });
  }

  /** Records how an intent's effect ended; the first outcome wins and later ones are ignored. */
  recordOutcome(ref: T.ObjectRef, intentId: string, outcome: T.Outcome): T.RecordedOutcome {
    return this.#write(() => {
      const intent = this.#prep(`SELECT uid, seq, name FROM entries WHERE entry = 'intent' AND intent_id = ?`).get(
        intentId,
      ) as { uid: string; seq: number; name: string } | undefined;
      if (!intent)
        throw new JournalError('ERR_JOURNAL_UNKNOWN_INTENT', `no intent ${intentId} in journal ${this.path}`);
      if (intent.uid !== ref.uid)
        throw new JournalError('ERR_JOURNAL_REF', `intent ${intentId} belongs to ${intent.uid}, not ${ref.uid}`);
      const prior = this.#prep(`SELECT ok FROM entries WHERE entry = 'outcome' AND intent_id = ?`).get(intentId) as
        { ok: number } | undefined;
      if (prior) return { recorded: false, ok: prior.ok === 1 };
      const writtenAt = new Date().toISOString();
      const row = this.#prep(ENTRY).run({
        ...NONE,
        uid: ref.uid,
        seq: intent.seq,
        entry: 'outcome',
        name: intent.name,
        intentId,
        ok: outcome.ok ? 1 : 0,
        code: outcome.ok ? null : outcome.code,
        message: outcome.ok ? null : redactText(outcome.message),
        data: outcome.ok ? redactedJson(outcome.result) : failureData(outcome.retryable),
        recovered: outcome.recovered ? 1 : null,
        at: outcome.at === undefined ? writtenAt : isoTime(outcome.at, `outcome of ${intentId} time`),
        writtenAt,
      });
      this.#appendedAt(row.lastInsertRowid);
      this.#prep('DELETE FROM open_intents WHERE intent_id = ?').run(intentId);
      return { recorded: true, ok: outcome.ok };
    });
  }

  /** Intents written and not answered, oldest first: what the runtime recovers on start. */
  openIntents(uid?: string): T.OpenIntent[] {
    const where = uid === undefined ? '' : 'WHERE oi.uid = ?';
    const rows = this.#prep(
      `SELECT ${ENTRY_COLUMNS} FROM open_intents oi JOIN entries e ON e.lsn = oi.lsn JOIN objects o ON o.uid = e.uid ${where} ORDER BY oi.lsn`,
    ).all(...(uid === undefined ? [] : [uid])) as EntryRow[];
    return rows.map(toOpenIntent);
  }

  /** The object's latest machine state and the sequence number of the step that made it. */
  snapshot(uid: string): T.Snapshot | undefined {
    const row = this.#prep('SELECT * FROM objects WHERE uid = ?').get(uid) as ObjectRow | undefined;
    return row && toSnapshot(row);
  }

  /** Every object the journal knows, by namespace and name. */
  objects(): T.Snapshot[] {
    return (this.#prep('SELECT * FROM objects ORDER BY namespace, name, created_at').all() as ObjectRow[]).map(
      toSnapshot,
    );
  }

  /** Rows of the target's objects in write order (lsn), optionally after a step or an lsn. */
  timeline(target: TimelineTarget, query: T.TimelineQuery = {}): T.TimelineRow[] {
    const uids = 'uid' in target ? [target.uid] : 'uids' in target ? [...target.uids] : this.#uidsNamed(target);
    if (uids.length === 0) return [];
    // Only the filters asked for, so SQLite picks the (uid, lsn) index when following.
    const filters = [`e.uid IN (${uids.map(() => '?').join(', ')})`];
    const params: (string | number)[] = [...uids];
    for (const [filter, value] of [
      ['e.seq > ?', query.afterSeq],
      ['e.seq < ?', query.beforeSeq],
      ['e.lsn > ?', query.afterLsn],
    ] as const) {
      if (value === undefined) continue;
      filters.push(filter);
      params.push(value);
    }
    const sql = `SELECT ${ENTRY_COLUMNS} FROM entries e JOIN objects o ON o.uid = e.uid WHERE ${filters.join(' AND ')} ORDER BY e.lsn LIMIT ?`;
    const rows = this.#db.prepare(sql).all(...params, query.limit ?? -1) as EntryRow[];
    return rows.map(toTimelineRow);
  }

  /** Every object (or the one with `uid`) with when it entered its state, its last error and open intents. */
  overview(uid?: string): T.ObjectOverview[] {
    const rows = this.#prep(
      `${OVERVIEW} WHERE @uid IS NULL OR o.uid = @uid ORDER BY o.namespace, o.name, o.created_at`,
    ).all({
      uid: uid ?? null,
    }) as OverviewRow[];
    const entryAt = this.#prep(
      `SELECT ${ENTRY_COLUMNS} FROM entries e JOIN objects o ON o.uid = e.uid WHERE e.lsn = ?`,
    );
    return rows.map((row) =>
      toOverview(row, (lsn) => (lsn === null ? undefined : (entryAt.get(lsn) as EntryRow | undefined))),
    );
  }

  /**
   * Calls `listener` after each write this Journal object commits, with the rows it appended (as
   * `timeline` reads them) or the object it forgot; in this process only. Returns the unsubscribe.
   */
  watch(listener: (change: T.JournalChange) => void): () => void {
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  /** Counts for /metrics: objects, rows, open intents and the main file's size in bytes. */
  stats(): { objects: number; rows: number; openIntents: number; bytes: number } {
    const count = (table: string): number =>
      (this.#prep(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    const bytes =
      (this.#db.pragma('page_count', { simple: true }) as number) *
      (this.#db.pragma('page_size', { simple: true }) as number);
    return { objects: count('objects'), rows: count('entries'), openIntents: count('open_intents'), bytes };
  }

  /** The durability settings in force, for the manager's start-up log. */
  settings(): { journalMode: string; synchronous: string } {
    const names = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];
    const sync = this.#db.pragma('synchronous', { simple: true }) as number;
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous: names[sync] ?? String(sync),
    };
  }

  /** The newest lsn in the file (0 when empty). */
  lastLsn(): number {
    return (this.#prep('SELECT COALESCE(MAX(lsn), 0) AS lsn FROM entries').get() as { lsn: number }).lsn;
  }

  /** Deletes steps older than the last `keep` of each object, never a step with an open intent; returns rows deleted. */
  prune(options: { readonly keep?: number } = {}): number {
    const keep = options.keep ?? this.#retain;
    let deleted = 0;
    for (const { uid, seq } of this.#prep('SELECT uid, seq FROM objects').all() as { uid: string; seq: number }[]) {
      if (seq <= keep) continue;
      // One transaction per object, so the manager's steps never wait behind a whole prune.
      deleted += this.#write(
        () =>
          this.#prep(
            `DELETE FROM entries WHERE uid = @uid AND seq <= @cutoff AND seq NOT IN
               (SELECT e.seq FROM open_intents oi JOIN entries e ON e.lsn = oi.lsn WHERE oi.uid = @uid)`,
          ).run({ uid, cutoff: seq - keep }).changes,
      );
    }
    return deleted;
  }

  /** Deletes every row and the snapshot of an object gone from Kubernetes; refused while it has open intents. */
  forget(uid: string): number {
    const deleted = this.#write(() => {
      const open = (this.#prep('SELECT COUNT(*) AS n FROM open_intents WHERE uid = ?').get(uid) as { n: number }).n;
      if (open > 0)
        throw new JournalError(
          'ERR_JOURNAL_OPEN_INTENTS',
          `object ${uid} still has ${open} open intent(s); recover them first`,
        );
      this.#prep('DELETE FROM objects WHERE uid = ?').run(uid);
      return this.#prep('DELETE FROM entries WHERE uid = ?').run(uid).changes;
    });
    this.#tell({ kind: 'forgotten', uid });
    return deleted;
  }

  /** Gives up the writer lease and closes the file (also when the lease cannot be given up: a damaged file). */
  close(): void {
    if (!this.#db.open) return;
    try {
      if (this.#me) releaseLease(this.#db, this.#me);
    } finally {
      this.#db.close();
    }
  }

  #uidsNamed(t: { namespace: string; name: string; kind?: T.ObjectKind }): string[] {
    const rows = this.#prep('SELECT uid, kind FROM objects WHERE namespace = ? AND name = ? ORDER BY created_at').all(
      t.namespace,
      t.name,
    ) as {
      uid: string;
      kind: string;
    }[];
    return rows.filter((r) => t.kind === undefined || r.kind === t.kind).map((r) => r.uid);
  }

  #write<R>(fn: () => R): R {
    const me = this.#me;
    if (!me) throw new JournalError('ERR_JOURNAL_READONLY', `journal ${this.path} is open read-only`);
    let result: R;
    this.#appended = null;
    const started = performance.now();
    try {
      result = this.#db
        .transaction(() => {
          assertLease(this.#prep('SELECT pid, start_ticks, boot_id, host FROM writer WHERE id = 1'), this.path, me);
          return fn();
        })
        .immediate();
    } catch (err) {
      const failure =
        err instanceof JournalError
          ? err
          : new JournalError('ERR_JOURNAL_WRITE', `journal ${this.path}: write failed: ${(err as Error).message}`, {
              cause: err,
            });
      this.#onWrite?.(failure, (performance.now() - started) / 1000);
      throw failure;
    }
    this.#onWrite?.(undefined, (performance.now() - started) / 1000);
    // Set by the inserts inside fn (the compiler cannot see them through the callback).
    const appended = this.#appended as [number, number] | null;
    if (appended && this.#watchers.size > 0) {
      const rows = this.#prep(
        `SELECT ${ENTRY_COLUMNS} FROM entries e JOIN objects o ON o.uid = e.uid WHERE e.lsn BETWEEN ? AND ? ORDER BY e.lsn`,
      ).all(...appended) as EntryRow[];
      this.#tell({ kind: 'appended', rows: rows.map(toTimelineRow) });
    }
    return result;
  }

  #appendedAt(rowid: number | bigint): number {
    const lsn = Number(rowid);
    this.#appended = [this.#appended?.[0] ?? lsn, lsn];
    return lsn;
  }

  #tell(change: T.JournalChange): void {
    for (const watcher of this.#watchers) {
      try {
        watcher(change);
      } catch {
        // A watcher's failure is its own: the write it hears about has committed.
      }
    }
  }

  #prep(sql: string): Database.Statement {
    let stmt = this.#stmt.get(sql);
    if (!stmt) this.#stmt.set(sql, (stmt = this.#db.prepare(sql)));
    return stmt;
  }
}
