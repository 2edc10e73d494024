/** The shapes the journal takes in and gives back; its storage layout stays private. */
import type { JournalError } from './errors.ts';

/** Which kind of object a machine runs for. */
export type ObjectKind = 'EtcdCluster' | 'EtcdMember' | 'EtcdSnapshot' | 'EtcdSnapshotSchedule';

/** The name of the machine a kind runs, as the journal, the logs and the metrics say it. */
export type MachineName = 'cluster' | 'member' | 'snapshot' | 'schedule';

/** The object a step belongs to, keyed by its metadata.uid. */
export interface ObjectRef {
  readonly uid: string;
  readonly kind: ObjectKind;
  readonly namespace: string;
  readonly name: string;
  /** For an EtcdMember, EtcdSnapshot or EtcdSnapshotSchedule, the name of its EtcdCluster (same namespace), so `journal CLUSTER` finds it. */
  readonly cluster?: string;
}

/** What the machine was fed: a dotted event type plus its fields, stamped by the runtime. */
export interface StepEvent {
  readonly type: string;
  /** When the event happened, as stamped by the runtime (machines have no clock): a Date, ISO text or epoch ms. */
  readonly at: Date | string | number;
  readonly [field: string]: unknown;
}

/** A named, parameterised action the machine asked for (xstate's action as data). */
export interface Intent {
  readonly type: string;
  readonly params?: Readonly<Record<string, unknown>>;
}

/** An xstate state value: a state name, or nested/parallel states as an object. */
export type StateValue = string | { readonly [state: string]: StateValue | undefined };

/** One machine step: the event, the transition it caused and the intents it emitted. */
export interface Step {
  /** Machine name, e.g. `cluster` or `member`. */
  readonly machine: string;
  readonly event: StepEvent;
  /** State before and after: a name, or an xstate state value (`{ bootstrapping: 'seeding' }` reads `bootstrapping.seeding`). */
  readonly from: StateValue;
  readonly to: StateValue;
  /** The machine's persisted snapshot after the step (xstate `getPersistedSnapshot`). */
  readonly state: unknown;
  readonly intents: readonly Intent[];
  /** Forces the sequence number (must exceed the journal's), e.g. after resuming from status.observed. */
  readonly seq?: number;
}

/** What {@link Journal.recordStep} assigned. */
export interface RecordedStep {
  readonly seq: number;
  /** `${uid}:${seq}:${index}`, one per intent, in the intents' order. */
  readonly intentIds: readonly string[];
}

/** How an effect ended: ok with a result, or an error with a code. */
export type Outcome = (
  | { readonly ok: true; readonly result?: unknown }
  | {
      readonly ok: false;
      readonly code: string;
      readonly message: string;
      /** False: a failure retrying cannot fix, kept so that a resume feeds it as it was fed. */
      readonly retryable?: boolean;
    }
) & {
  readonly at?: Date | string | number;
  /** Found by a handler's recover() after a restart rather than reported by its run(). */
  readonly recovered?: boolean;
};

/** What {@link Journal.recordOutcome} did: the first outcome of an intent wins, later ones are ignored. */
export interface RecordedOutcome {
  readonly recorded: boolean;
  /** The outcome that stands: the one just written, or the earlier one that made this a duplicate. */
  readonly ok: boolean;
}

/** An intent written before its effect ran and not answered yet. */
export interface OpenIntent {
  readonly id: string;
  readonly ref: ObjectRef;
  readonly seq: number;
  readonly index: number;
  readonly type: string;
  readonly params: Record<string, unknown>;
  /** The time of the event that caused it. */
  readonly at: string;
  readonly writtenAt: string;
}

/** The latest machine state of an object. */
export interface Snapshot {
  readonly ref: ObjectRef;
  readonly machine: string;
  readonly state: unknown;
  /** Stage name after the last step (the transition's `to`). */
  readonly stage: string;
  readonly seq: number;
  readonly updatedAt: string;
}

/** One row of an object's timeline; `lsn` orders every row of the file. */
export interface TimelineRow {
  readonly lsn: number;
  readonly ref: ObjectRef;
  readonly seq: number;
  readonly entry: 'event' | 'transition' | 'intent' | 'outcome';
  /** Event type, machine name, or intent type (for intents and their outcomes). */
  readonly name: string;
  readonly intentId?: string;
  readonly from?: string;
  readonly to?: string;
  readonly ok?: boolean;
  readonly code?: string;
  readonly message?: string;
  /** On an outcome: found by recover() after a restart. */
  readonly recovered?: boolean;
  /** On a failed outcome: a failure retrying cannot fix (absent: retryable, as in rows written before it was kept). */
  readonly retryable?: false;
  /** Event fields, intent params, or outcome result, already redacted. */
  readonly data?: unknown;
  /** Event time for event, transition and intent rows; the effect's end for outcomes. */
  readonly at: string;
  readonly writtenAt: string;
}

/** Which rows {@link Journal.timeline} returns. */
export interface TimelineQuery {
  /** Steps after this sequence number (per object). */
  readonly afterSeq?: number;
  /** Steps before this sequence number (per object): a page of older steps. */
  readonly beforeSeq?: number;
  /** Rows after this lsn (file-wide): what --follow uses. */
  readonly afterLsn?: number;
  readonly limit?: number;
}

/** What a committed write changed, as {@link Journal.watch} tells it. */
export type JournalChange =
  | { readonly kind: 'appended'; readonly rows: readonly TimelineRow[] }
  | { readonly kind: 'forgotten'; readonly uid: string };

/** An object's latest state with what a list of objects shows beside it (the debug page's index). */
export interface ObjectOverview extends Snapshot {
  /** The step whose transition moved it into its current state, and its time; null when no kept step moved it. */
  readonly entered: { readonly seq: number; readonly at: string } | null;
  /** Its newest failed outcome; `current` while no outcome of the object came after it. */
  readonly lastError: {
    readonly seq: number;
    readonly intent: string;
    readonly code: string;
    readonly message: string;
    readonly at: string;
    readonly current: boolean;
  } | null;
  /** Intents journaled and not answered. */
  readonly openIntents: number;
}

/** How to open a journal file. */
export interface JournalOptions {
  /** A reader: never writes, never takes the lease, works while the manager writes. */
  readonly readonly?: boolean;
  /** Steps kept per object by {@link Journal.prune}; default 10,000. */
  readonly retainSteps?: number;
  /** SQLite `synchronous`; FULL (default) fsyncs the WAL at every commit. See docs/journal.md. */
  readonly synchronous?: 'FULL' | 'NORMAL';
  /** How long a statement waits for SQLite's lock before failing; default 5 s. */
  readonly busyTimeoutMs?: number;
  /**
   * Told after every write transaction: with nothing when it was committed, with the error when it
   * was not (rolled back), and the seconds it took. The manager's /readyz reads it (docs/journal.md,
   * "A damaged journal"); its metrics time it.
   */
  readonly onWrite?: (failure?: JournalError, seconds?: number) => void;
}

/** Which objects a timeline covers: one uid, several, or every object with a name. */
export type TimelineTarget =
  | { readonly uid: string }
  | { readonly uids: readonly string[] }
  | { readonly namespace: string; readonly name: string; readonly kind?: ObjectKind };
