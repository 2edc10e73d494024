/** Coded errors of the journal: every failure a caller can act on has its own code. */

/** Codes carried by {@link JournalError}; the CLI prints them and tests match on them. */
export type JournalErrorCode =
  | 'ERR_JOURNAL_LOCKED'
  | 'ERR_JOURNAL_LEASE_LOST'
  | 'ERR_JOURNAL_READONLY'
  | 'ERR_JOURNAL_NOT_FOUND'
  | 'ERR_JOURNAL_OPEN'
  | 'ERR_JOURNAL_DAMAGED'
  | 'ERR_JOURNAL_OPEN_INTENTS'
  | 'ERR_JOURNAL_SCHEMA'
  | 'ERR_JOURNAL_SEQUENCE'
  | 'ERR_JOURNAL_SECRET'
  | 'ERR_JOURNAL_UNKNOWN_INTENT'
  | 'ERR_JOURNAL_REF'
  | 'ERR_JOURNAL_WRITE';

/** An error of the journal, with a stable code and the underlying cause when there is one. */
export class JournalError extends Error {
  override readonly name: string = 'JournalError';
  readonly code: JournalErrorCode;

  constructor(code: JournalErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Another live process holds the writer lease of the same journal file. */
export class JournalLockedError extends JournalError {
  override readonly name: string = 'JournalLockedError';
  /** The pid recorded in the lease, for the message and for an operator who wants to look. */
  readonly holderPid: number;

  constructor(path: string, holderPid: number, holderHost: string) {
    super(
      'ERR_JOURNAL_LOCKED',
      `journal ${path} is already open for writing by pid ${holderPid} on ${holderHost}; ` +
        'only one manager may write it (readers may open it with { readonly: true })',
    );
    this.holderPid = holderPid;
  }
}

/** True when `err` is a {@link JournalError} with the given code. */
export function isJournalError(err: unknown, code?: JournalErrorCode): err is JournalError {
  return err instanceof JournalError && (code === undefined || err.code === code);
}

/**
 * SQLite's codes for a database whose pages are not sound (torn, overwritten, truncated). A file
 * that is not SQLite at all (SQLITE_NOTADB) is not one at open: the path may name the wrong file.
 * Once open it is: the file was a journal when it was opened, so its header was overwritten.
 */
const DAMAGE_CODES = /^SQLITE_CORRUPT/;
const DAMAGE_CODES_WHILE_OPEN = /^SQLITE_(CORRUPT|NOTADB)/;

/**
 * True when `err` (or its cause) is SQLite saying the file is damaged, or ERR_JOURNAL_DAMAGED.
 * `whileOpen`: the error came from a journal already open (a read or a write), not from opening one.
 */
export function isDamage(err: unknown, options: { readonly whileOpen?: boolean } = {}): boolean {
  if (isJournalError(err, 'ERR_JOURNAL_DAMAGED')) return true;
  const code = (err as { code?: unknown } | null)?.code;
  const codes = options.whileOpen ? DAMAGE_CODES_WHILE_OPEN : DAMAGE_CODES;
  if (typeof code === 'string' && codes.test(code)) return true;
  return err instanceof Error && err.cause !== undefined && isDamage(err.cause, options);
}
