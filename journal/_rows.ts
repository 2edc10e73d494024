/** Private helpers: stored rows to public shapes, and times to ISO text. */
import { JournalError } from './errors.ts';
import type { ObjectKind, ObjectOverview, ObjectRef, OpenIntent, Snapshot, StateValue, TimelineRow } from './types.ts';

/** An `objects` row as stored. */
export interface ObjectRow {
  uid: string;
  kind: ObjectKind;
  namespace: string;
  name: string;
  cluster: string | null;
  machine: string;
  stage: string;
  state: string | null;
  seq: number;
  updated_at: string;
}

/** An `objects` row with the lsns and count the overview query adds. */
export interface OverviewRow extends ObjectRow {
  moved_lsn: number | null;
  failed_lsn: number | null;
  outcome_lsn: number | null;
  open_intents: number;
}

/** An overview row as the public shape; `entry` reads an entry by its lsn. */
export function toOverview(row: OverviewRow, entry: (lsn: number | null) => EntryRow | undefined): ObjectOverview {
  const moved = entry(row.moved_lsn);
  const failed = entry(row.failed_lsn);
  return {
    ...toSnapshot(row),
    entered: moved ? { seq: moved.seq, at: moved.at } : null,
    lastError: failed
      ? {
          seq: failed.seq,
          intent: failed.name,
          code: failed.code ?? '',
          message: failed.message ?? '',
          at: failed.at,
          current: row.failed_lsn === row.outcome_lsn,
        }
      : null,
    openIntents: row.open_intents,
  };
}

/** An `entries` row joined with its object's identity. */
export interface EntryRow {
  lsn: number;
  uid: string;
  seq: number;
  entry: TimelineRow['entry'];
  name: string;
  intent_id: string | null;
  from_state: string | null;
  to_state: string | null;
  ok: number | null;
  code: string | null;
  message: string | null;
  data: string | null;
  recovered: number | null;
  at: string;
  written_at: string;
  kind: ObjectKind;
  namespace: string;
  obj_name: string;
  cluster: string | null;
}

/** The ref of a stored object or entry. */
export function toRef(
  row: { uid: string; kind: ObjectKind; namespace: string; cluster: string | null },
  name: string,
): ObjectRef {
  const ref = { uid: row.uid, kind: row.kind, namespace: row.namespace, name };
  return row.cluster === null ? ref : { ...ref, cluster: row.cluster };
}

/** A stored object as a snapshot. */
export function toSnapshot(row: ObjectRow): Snapshot {
  return {
    ref: toRef(row, row.name),
    machine: row.machine,
    state: row.state === null ? undefined : JSON.parse(row.state),
    stage: row.stage,
    seq: row.seq,
    updatedAt: row.updated_at,
  };
}

/** A stored entry as a timeline row, leaving out the columns its kind does not use. */
export function toTimelineRow(row: EntryRow): TimelineRow {
  const out: Record<string, unknown> = {
    lsn: row.lsn,
    ref: toRef(row, row.obj_name),
    seq: row.seq,
    entry: row.entry,
    name: row.name,
  };
  if (row.intent_id !== null) out.intentId = row.intent_id;
  if (row.from_state !== null) out.from = row.from_state;
  if (row.to_state !== null) out.to = row.to_state;
  if (row.ok !== null) out.ok = row.ok === 1;
  if (row.code !== null) out.code = row.code;
  if (row.message !== null) out.message = row.message;
  if (row.data !== null)
    Object.assign(out, row.ok === 0 ? failureOf(row.data) : { data: JSON.parse(row.data) as unknown });
  if (row.recovered === 1) out.recovered = true;
  out.at = row.at;
  out.writtenAt = row.written_at;
  return out as unknown as TimelineRow;
}

/**
 * What a failed outcome's `data` holds: `{"retryable":false}` for a failure retrying cannot fix,
 * nothing (NULL) otherwise, as every failure was written before the flag was kept. No new column:
 * the file's schema stays, so a manager of the release before still opens it.
 */
export const failureData = (retryable: boolean | undefined): string | null =>
  retryable === false ? JSON.stringify({ retryable: false }) : null;

/** A failed outcome's `data` read back: its flag, where it was kept. */
function failureOf(data: string): Pick<TimelineRow, 'retryable'> {
  return (JSON.parse(data) as { retryable?: unknown }).retryable === false ? { retryable: false } : {};
}

/** An open intent from its entry row. */
export function toOpenIntent(row: EntryRow): OpenIntent {
  const index = Number(row.intent_id?.slice(row.intent_id.lastIndexOf(':') + 1));
  return {
    id: row.intent_id ?? '',
    ref: toRef(row, row.obj_name),
    seq: row.seq,
    index,
    type: row.name,
    params: row.data === null ? {} : (JSON.parse(row.data) as Record<string, unknown>),
    at: row.at,
    writtenAt: row.written_at,
  };
}

/** A caller's time as ISO-8601 UTC text; refuses what is not a time. */
export function isoTime(value: Date | string | number, what: string): string {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) throw new JournalError('ERR_JOURNAL_WRITE', `${what} ${String(value)} is not a time`);
  return d.toISOString();
}

/** The columns of an entry joined with its object, as the SELECT list. */
export const ENTRY_COLUMNS =
  'e.lsn, e.uid, e.seq, e.entry, e.name, e.intent_id, e.from_state, e.to_state, e.ok, e.code, e.message, ' +
  'e.data, e.recovered, e.at, e.written_at, o.kind, o.namespace, o.name AS obj_name, o.cluster';

/** A state value as one name: `bootstrapping.seeding`; parallel regions joined by `, `. */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  return Object.entries(value)
    .map(([k, v]) =>
      v === undefined || (typeof v === 'object' && Object.keys(v).length === 0) ? k : `${k}.${stateName(v)}`,
    )
    .join(', ');
}
