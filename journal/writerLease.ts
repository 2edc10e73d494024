/**
 * The one-writer rule. The lease is a row in the journal itself (pid, process start time,
 * boot id), taken and checked inside SQLite write transactions, so two managers racing for
 * it are serialised by SQLite's own lock and no lock file can outlive its database.
 * A lease is stale once its process is gone: no such pid, a zombie, a pid reused by a
 * process that started at another time, or a machine that has rebooted since.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type Database from 'better-sqlite3';
import { JournalError, JournalLockedError } from './errors.ts';

/** Who holds (or wants) the writer lease. */
export interface WriterIdentity {
  readonly pid: number;
  /** Process start time in clock ticks since boot (Linux /proc); null where unknown. */
  readonly startTicks: string | null;
  readonly bootId: string;
  readonly host: string;
}

interface WriterRow {
  pid: number;
  start_ticks: string | null;
  boot_id: string;
  host: string;
}

/** The identity of this process. */
export function currentWriter(): WriterIdentity {
  return {
    pid: process.pid,
    startTicks: processStat(process.pid)?.startTicks ?? null,
    bootId: bootId(),
    host: hostname(),
  };
}

/** Takes the lease for `me`, or throws ERR_JOURNAL_LOCKED if a live process holds it. */
export function acquireLease(db: Database.Database, path: string, me: WriterIdentity): void {
  db.transaction(() => {
    const row = db.prepare('SELECT pid, start_ticks, boot_id, host FROM writer WHERE id = 1').get() as
      WriterRow | undefined;
    if (row && holderAlive(row, me)) throw new JournalLockedError(path, row.pid, row.host);
    db.prepare(
      `INSERT OR REPLACE INTO writer (id, pid, start_ticks, boot_id, host, acquired_at) VALUES (1, ?, ?, ?, ?, ?)`,
    ).run(me.pid, me.startTicks, me.bootId, me.host, new Date().toISOString());
  }).immediate();
}

/** Throws ERR_JOURNAL_LEASE_LOST unless `me` still holds the lease; call inside a write transaction. */
export function assertLease(stmt: Database.Statement, path: string, me: WriterIdentity): void {
  const row = stmt.get() as WriterRow | undefined;
  if (!row || row.pid !== me.pid || row.start_ticks !== me.startTicks || row.boot_id !== me.bootId) {
    throw new JournalError(
      'ERR_JOURNAL_LEASE_LOST',
      `journal ${path}: this process (pid ${me.pid}) no longer holds the writer lease` +
        (row ? `; pid ${row.pid} on ${row.host} took it` : ''),
    );
  }
}

/** Gives the lease up if `me` holds it. */
export function releaseLease(db: Database.Database, me: WriterIdentity): void {
  db.prepare('DELETE FROM writer WHERE id = 1 AND pid = ? AND boot_id = ? AND start_ticks IS ?').run(
    me.pid,
    me.bootId,
    me.startTicks,
  );
}

function holderAlive(row: WriterRow, me: WriterIdentity): boolean {
  if (row.boot_id !== me.bootId) return false;
  try {
    process.kill(row.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const stat = processStat(row.pid);
  if (!stat) return row.start_ticks === null; // no /proc: the pid's existence is all we know
  return stat.state !== 'Z' && stat.startTicks === row.start_ticks;
}

/** State letter and start time (field 22) from /proc/PID/stat, or null without /proc. */
function processStat(pid: number): { state: string; startTicks: string } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '?', startTicks: fields[19] ?? '' };
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return `host:${hostname()}`;
  }
}
