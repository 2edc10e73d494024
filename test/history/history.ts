/**
 * A history of etcd client operations and watch events, as the history checker reads it
 * (localcluster/tools/history-checker, docs/reliability.md): every operation with its call and
 * return time (monotonic nanoseconds from the recording's start), its input and its output,
 * or no output when the outcome is unknown (an error or a timeout: it may have taken effect).
 */

/** A txn's condition on its key: the mod revision (0: absent) or the value equals this. */
export type Compare = { readonly modRevision: number } | { readonly value: string };

/** One request. `key` is the key it touches (for lease ops, the one key the lease is used with). */
export type Input =
  | { readonly type: 'get' | 'delete'; readonly key: string }
  | { readonly type: 'put'; readonly key: string; readonly value: string; readonly lease?: string }
  /** If `compare` holds, put `value`; else read the key. */
  | { readonly type: 'txn'; readonly key: string; readonly compare: Compare; readonly value: string }
  | { readonly type: 'leaseGrant'; readonly key: string }
  | { readonly type: 'leaseRevoke'; readonly key: string; readonly lease: string };

/** A key's value and mod revision as read. */
export interface KV {
  readonly value: string;
  readonly modRevision: number;
}

/**
 * A known answer. `revision` is the response header's; `kv` is what a get or a failed txn read
 * (absent: no key), or what a delete removed; `lease` is a granted lease's ID.
 */
export interface Output {
  readonly revision: number;
  readonly kv?: KV;
  readonly deleted?: number;
  readonly succeeded?: boolean;
  readonly lease?: string;
}

/** One call: `output` null when its outcome is unknown (then `error` says why). */
export interface Operation {
  readonly client: number;
  readonly call: number;
  readonly return: number;
  readonly input: Input;
  readonly output: Output | null;
  readonly error?: string;
}

/** One watch event, with the time it was received. */
export interface WatchEvent {
  readonly type: 'put' | 'delete';
  readonly key: string;
  readonly value?: string;
  readonly modRevision: number;
  readonly at: number;
}

/** One watcher's events, in the order delivered, across the client's resumes. */
export interface Watch {
  readonly watcher: number;
  readonly client: number;
  readonly prefix: string;
  readonly startRevision: number;
  readonly events: readonly WatchEvent[];
  /** Times the watch was made again after its stream broke. */
  readonly resumes: number;
  /** The recording waited until this watcher had seen every acknowledged write. */
  readonly complete: boolean;
  /** etcd canceled the watch (a compaction past where it resumed): its last event is its end. */
  readonly canceled?: { readonly at: number; readonly reason: string };
}

/**
 * A rollback in place during the recording (docs/reliability.md, "A rollback under the history"):
 * the data became a snapshot's and revisions went on from the snapshot's + `bump`.
 * `snapshotRevision` is the EtcdSnapshot's status.revision, the member's as the snapshot began
 * (it may hold a few writes made while it began); `asked` is when the rollback was asked,
 * `answered` when it was seen done, on the operations' clock.
 */
export interface Rollback {
  readonly snapshotRevision: number;
  readonly bump: number;
  readonly asked: number;
  readonly answered: number;
}

/**
 * A rollback as the action that made it saw it: the EtcdSnapshot's status.revision, and when it
 * was asked and seen answered, as process.hrtime.bigint() (the recorder turns them into its clock).
 */
export interface RollbackSeen {
  readonly snapshotRevision: number;
  readonly asked: bigint;
  readonly answered: bigint;
}

/** What the checker reads. */
export interface History {
  readonly operations: readonly Operation[];
  /** One record a watch: a watcher whose watch etcd canceled has a record for each watch it made. */
  readonly watches: readonly Watch[];
  readonly rollback?: Rollback;
}

/** Monotonic nanoseconds since `origin` (process.hrtime.bigint()), as a JSON-safe number. */
export const since = (origin: bigint): number => Number(process.hrtime.bigint() - origin);
