/**
 * A damaged journal (torn by a full disk, overwritten by a bad volume) must not stop the
 * operator: it is moved aside, kept for inspection under a name with the time, and a new one is
 * started. The manager then carries on from what the cluster shows (adoption, docs/journal.md).
 */
import { existsSync, renameSync } from 'node:fs';
import { isJournalError } from './errors.ts';
import { Journal } from './journal.ts';
import type { JournalOptions } from './types.ts';

/** What was done with a damaged file. */
export interface ReplacedJournal {
  /** Where the damaged file now is (its -wal and -shm beside it, if there were any). */
  readonly movedTo: string;
  /** What SQLite found. */
  readonly reason: string;
}

/** Opens the journal for writing; a damaged one is moved aside and a new one opened in its place. */
export function openReplacingDamaged(
  path: string,
  options: JournalOptions = {},
  now: Date = new Date(),
): { journal: Journal; replaced?: ReplacedJournal } {
  try {
    return { journal: Journal.open(path, options) };
  } catch (err) {
    if (!isJournalError(err, 'ERR_JOURNAL_DAMAGED')) throw err;
    const movedTo = moveAside(path, now);
    return { journal: Journal.open(path, options), replaced: { movedTo, reason: err.message } };
  }
}

/**
 * Renames a damaged journal (and its -wal and -shm) to NAME.damaged-<UTC time>; returns the new
 * name. Every connection to it must be closed first: SQLite deletes a -wal by its name when the
 * last connection closes, which would then be the new journal's.
 */
export function moveAside(path: string, now: Date = new Date()): string {
  const movedTo = `${path}.damaged-${now.toISOString().replaceAll(':', '')}`;
  for (const suffix of ['', '-wal', '-shm']) {
    if (existsSync(path + suffix)) renameSync(path + suffix, movedTo + suffix);
  }
  return movedTo;
}
