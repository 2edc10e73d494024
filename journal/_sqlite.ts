/** Private: the journal's write statements and how it opens SQLite files. */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { isDamage, JournalError } from './errors.ts';
import { checkSchema } from './schema.ts';

/** Appends one row to `entries`. */
export const ENTRY = `INSERT INTO entries (uid, seq, entry, name, intent_id, from_state, to_state, ok, code, message, data, recovered, at, written_at)
  VALUES (@uid, @seq, @entry, @name, @intentId, @from, @to, @ok, @code, @message, @data, @recovered, @at, @writtenAt)`;
/** Creates or moves on an object's snapshot. */
export const UPSERT_OBJECT = `INSERT INTO objects (uid, kind, namespace, name, cluster, machine, stage, state, seq, created_at, updated_at)
  VALUES (@uid, @kind, @namespace, @name, @cluster, @machine, @stage, @state, @seq, @writtenAt, @writtenAt)
  ON CONFLICT (uid) DO UPDATE SET namespace = excluded.namespace, name = excluded.name, cluster = excluded.cluster,
    machine = excluded.machine, stage = excluded.stage, state = excluded.state, seq = excluded.seq, updated_at = excluded.updated_at`;
/** Each object with the lsns of its last move, its last failed and last outcome, and its open intents (add WHERE). */
export const OVERVIEW = `SELECT o.*,
    (SELECT e.lsn FROM entries e WHERE e.uid = o.uid AND e.entry = 'transition' AND e.from_state <> e.to_state
      ORDER BY e.lsn DESC LIMIT 1) AS moved_lsn,
    (SELECT e.lsn FROM entries e WHERE e.uid = o.uid AND e.entry = 'outcome' AND e.ok = 0 ORDER BY e.lsn DESC LIMIT 1) AS failed_lsn,
    (SELECT e.lsn FROM entries e WHERE e.uid = o.uid AND e.entry = 'outcome' ORDER BY e.lsn DESC LIMIT 1) AS outcome_lsn,
    (SELECT COUNT(*) FROM open_intents oi WHERE oi.uid = o.uid) AS open_intents
  FROM objects o`;
/** The entry columns a row leaves empty unless it sets them. */
export const NONE = {
  intentId: null,
  from: null,
  to: null,
  ok: null,
  code: null,
  message: null,
  data: null,
  recovered: null,
};

/** Opens a SQLite file, turning SQLite's failure into ERR_JOURNAL_OPEN. */
export function openFile(path: string, options: Database.Options): Database.Database {
  try {
    return new Database(path, options);
  } catch (err) {
    throw wrapOpen(path, err);
  }
}

/** SQLite's own errors (not a database, permission denied) get a code and the path. */
export function wrapOpen(path: string, err: unknown): unknown {
  if (err instanceof JournalError) return err;
  if (isDamage(err)) return damaged(path, (err as Error).message, err);
  return new JournalError('ERR_JOURNAL_OPEN', `cannot open journal ${path}: ${(err as Error).message}`, { cause: err });
}

/** Opens an existing journal read-only, checking its schema is the one this code reads. */
export function openReader(path: string, timeout: number): Database.Database {
  if (!existsSync(path)) throw new JournalError('ERR_JOURNAL_NOT_FOUND', `no journal at ${path}`);
  const db = openFile(path, { readonly: true, fileMustExist: true, timeout });
  try {
    checkIntact(db, path);
    checkSchema(db, path);
    return db;
  } catch (err) {
    db.close();
    throw wrapOpen(path, err);
  }
}

function damaged(path: string, why: string, cause?: unknown): JournalError {
  return new JournalError('ERR_JOURNAL_DAMAGED', `journal ${path} is damaged: ${why}`, { cause });
}

/** Throws ERR_JOURNAL_DAMAGED unless SQLite's quick_check finds every page sound. */
export function checkIntact(db: Database.Database, path: string): void {
  const rows = db.pragma('quick_check(5)') as { quick_check: string }[];
  const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
  if (problems.length > 0) throw damaged(path, problems.join('; ').replace(/\s*\n\s*/g, ' '));
}
