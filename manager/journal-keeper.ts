/**
 * The manager's journal, kept usable. It is opened at start (a damaged file moved aside first);
 * replaced when SQLite finds it damaged while the manager runs; opened again when a replacement
 * failed; and its writes are watched, so /readyz can say when the journal cannot be written.
 * Work that meets the journal's failure asks `failed` what it means (docs/journal.md).
 */
import type { Logger } from 'pino';
import {
  isDamage,
  isJournalError,
  moveAside,
  openReplacingDamaged,
  type Journal,
  type JournalChange,
  type JournalError,
  type JournalOptions,
  type ReplacedJournal,
} from '../journal/index.ts';
import type { ManagerMetrics } from './metrics.ts';

/** What JournalKeeper needs. */
export interface JournalKeeperOptions {
  readonly path: string;
  readonly log: Logger;
  readonly metrics: ManagerMetrics;
  /** How the journal is opened (busy timeout, durability). */
  readonly journal?: Omit<JournalOptions, 'readonly' | 'onWrite'>;
  /** Least time between two tries to open a journal when there is none (default 1 s): each runs quick_check. */
  readonly reopenEveryMs?: number;
  readonly now?: () => Date;
}

/**
 * What an error that ended a piece of work means for the journal:
 * - `replaced`: the journal was damaged; it was moved aside and a new one opened, on which every
 *   object is worked again and adopted from what it shows;
 * - `stale`: the work ran on a journal that has since been replaced: do it again on the new one;
 * - `failed`: the journal could not be read or written (or there is none): rebuild the object's
 *   runner from the journal, as after a crash, and retry with back-off;
 * - `unrelated`: not the journal's doing.
 */
export type JournalVerdict = 'replaced' | 'stale' | 'failed' | 'unrelated';

/** A write to the journal in use, or word that a new journal took the place of a damaged one. */
export type KeeperChange = JournalChange | { readonly kind: 'replaced' };

/** Holds the journal the manager writes, and replaces it when it is damaged. */
export class JournalKeeper {
  /** The journal's file. */
  readonly path: string;
  readonly #o: JournalKeeperOptions;
  #journal: Journal | undefined;
  #generation = 0;
  #replaced: ReplacedJournal | undefined;
  #unwritable: string | undefined;
  /** When there is no journal: the last try to open one, and how it failed. */
  #lastTry: { at: number; error: unknown } | undefined;
  readonly #listeners: (() => void)[] = [];
  readonly #watchers = new Set<(change: KeeperChange) => void>();

  constructor(options: JournalKeeperOptions) {
    this.#o = options;
    this.path = options.path;
  }

  /** Opens the journal at start; throws what a new file cannot help (another writer, not a journal). */
  open(): Journal {
    return this.#open();
  }

  /** The journal in use; when the last replacement failed, a new one is tried here. */
  get journal(): Journal {
    if (this.#journal) return this.#journal;
    const at = this.#now().getTime();
    if (this.#lastTry && at - this.#lastTry.at < (this.#o.reopenEveryMs ?? 1000)) throw this.#lastTry.error;
    try {
      return this.#open();
    } catch (err) {
      this.#lastTry = { at, error: err };
      this.#cannotWrite(`no journal: ${this.path} cannot be opened: ${messageOf(err)}`);
      throw err;
    }
  }

  /** The journal in use, without trying to open one: undefined before the start's open and while there is none. */
  get current(): Journal | undefined {
    return this.#journal;
  }

  /** Tells `listener` every write committed to the journal in use, whichever it is (see Journal.watch); returns the unsubscribe. */
  watch(listener: (change: KeeperChange) => void): () => void {
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  /** How many journals were opened: work begun under one number and ended under another ran on a replaced one. */
  get generation(): number {
    return this.#generation;
  }

  /** The damaged file the journal in use replaced, if it replaced one. */
  get replaced(): ReplacedJournal | undefined {
    return this.#replaced;
  }

  /** Why the journal cannot be written now, in one line; undefined when the last write succeeded. */
  get unwritable(): string | undefined {
    return this.#unwritable;
  }

  /** Calls `listener` each time a new journal takes the place of a damaged one while the manager runs. */
  onReplaced(listener: () => void): void {
    this.#listeners.push(listener);
  }

  /** Reads an error that ended work begun under `generation`, replacing the journal when it is damaged. */
  failed(err: unknown, generation: number): JournalVerdict {
    if (generation !== this.#generation) return this.#journal ? 'stale' : 'failed';
    if (!this.#journal) return 'failed';
    if (isDamage(err, { whileOpen: true })) {
      this.#replace(this.#journal, err);
      return this.#journal ? 'replaced' : 'failed';
    }
    return fromJournal(err) ? 'failed' : 'unrelated';
  }

  /** Drops steps beyond what the journal keeps per object; undefined when the journal failed (see `failed`). */
  prune(): number | undefined {
    const generation = this.#generation;
    try {
      return this.journal.prune();
    } catch (err) {
      if (this.failed(err, generation) === 'unrelated') throw err;
      return undefined;
    }
  }

  /** Closes the journal in use. */
  close(): void {
    this.#journal?.close();
    this.#journal = undefined;
  }

  #open(): Journal {
    const generation = this.#generation + 1;
    const onWrite = (failure?: JournalError, seconds?: number): void => {
      if (seconds !== undefined) this.#o.metrics.journalWriteSeconds.observe(seconds);
      if (generation === this.#generation) this.#wrote(failure);
    };
    const opened = openReplacingDamaged(this.path, { ...this.#o.journal, onWrite }, this.#now());
    if (opened.replaced) this.#movedAside(opened.replaced);
    this.#journal = opened.journal;
    this.#generation = generation;
    this.#lastTry = undefined;
    this.#wrote();
    opened.journal.watch((change) => this.#tell(change));
    if (generation > 1) {
      for (const listener of this.#listeners) listener();
      this.#tell({ kind: 'replaced' });
    }
    return opened.journal;
  }

  /** Closes the damaged journal, moves its file aside and opens a new one in its place. */
  #replace(damaged: Journal, err: unknown): void {
    this.#journal = undefined;
    const reason = `journal ${this.path} is damaged: ${sqliteMessage(err)}`;
    try {
      // Before the move: SQLite deletes the -wal by its name when the last connection closes.
      damaged.close();
    } catch {
      // Giving up the lease may meet the damage too; the file is closed all the same.
    }
    try {
      this.#movedAside({ movedTo: moveAside(this.path, this.#now()), reason });
      this.#open();
    } catch (e) {
      this.#lastTry = { at: this.#now().getTime(), error: e };
      this.#cannotWrite(`${reason}; it could not be replaced: ${messageOf(e)}`, true);
    }
  }

  /** Said once per file moved aside: one log line and the counter. */
  #movedAside(replaced: ReplacedJournal): void {
    this.#replaced = replaced;
    this.#o.metrics.journalReplaced.inc();
    this.#o.log.warn(
      { journal: this.path, movedTo: replaced.movedTo, reason: replaced.reason },
      'the journal was damaged: kept aside, a new one started; its objects are adopted from what they show',
    );
  }

  #tell(change: KeeperChange): void {
    for (const watcher of this.#watchers) {
      try {
        watcher(change);
      } catch {
        // A watcher's failure is its own (Journal.watch says the same).
      }
    }
  }

  #wrote(failure?: JournalError): void {
    if (!failure) {
      if (this.#unwritable !== undefined) this.#o.log.info({ journal: this.path }, 'the journal can be written again');
      this.#unwritable = undefined;
      return;
    }
    // Damage is handled by `failed` (a new journal); a refused step (a secret, a bad sequence) is not the disk's.
    if (isDamage(failure, { whileOpen: true })) return;
    if (failure.code === 'ERR_JOURNAL_WRITE' || failure.code === 'ERR_JOURNAL_LEASE_LOST')
      this.#cannotWrite(messageOf(failure));
  }

  /** /readyz answers `reason` until a write succeeds; said once when the journal stops being writable. */
  #cannotWrite(reason: string, say = this.#unwritable === undefined): void {
    this.#unwritable = reason;
    if (say)
      this.#o.log.warn(
        { journal: this.path, reason },
        'the journal cannot be written: not ready until a write succeeds',
      );
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}

/** True when the journal, not the work, failed: a JournalError, or SQLite's own error from a read. */
function fromJournal(err: unknown): boolean {
  if (isJournalError(err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return true;
  return err instanceof Error && err.cause !== undefined && fromJournal(err.cause);
}

/** What SQLite said (the innermost error with its code), else the message of `err`. */
function sqliteMessage(err: unknown): string {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return `${messageOf(e)} (${code})`;
  }
  return messageOf(err);
}

/** The message of `err`, on one line. */
function messageOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, ' ');
}
