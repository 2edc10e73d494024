/**
 * The journal for humans: one line per step (time, step number, event, transition), its
 * intents indented beneath it with their outcomes, so each action reads next to the event
 * and state that caused it. `--json` gives one object per row, each intent with its cause.
 */
import type { TimelineRow } from './types.ts';

/** How to print a timeline. */
export interface TimelineFormat {
  /** One JSON object per row instead of text. */
  readonly json?: boolean;
  /** Prefix lines with `Kind/name` (default: once the rows have spanned several objects). */
  readonly showObject?: boolean;
}

/** What made an intent: the step's event and transition. */
export interface Cause {
  readonly event: string;
  readonly from: string;
  readonly to: string;
  readonly at: string;
}

interface Group {
  head: TimelineRow | undefined;
  cause: Cause;
  intents: { row: TimelineRow; outcome?: TimelineRow }[];
}

const MAX_REMEMBERED = 10_000;

/** Formats rows batch after batch (as --follow reads them), remembering each step's cause. */
export class TimelineFormatter {
  readonly #opts: TimelineFormat;
  readonly #causes = new Map<string, Cause>();
  // Once a timeline has shown two objects, every later line names its object too.
  readonly #uids = new Set<string>();

  constructor(opts: TimelineFormat = {}) {
    this.#opts = opts;
  }

  /** The lines for a batch of rows in lsn order. */
  format(rows: readonly TimelineRow[]): string[] {
    if (this.#opts.json) return this.#jsonLines(rows);
    for (const r of rows) this.#uids.add(r.ref.uid);
    const showObject = this.#opts.showObject ?? this.#uids.size > 1;
    const items: (Group | TimelineRow)[] = [];
    const groups = new Map<string, Group>();
    for (const row of rows) {
      const key = `${row.ref.uid}#${row.seq}`;
      if (row.entry === 'outcome') {
        const intent = groups.get(key)?.intents.find((i) => i.row.intentId === row.intentId);
        if (intent) intent.outcome = row;
        else items.push(row);
        continue;
      }
      let group = groups.get(key);
      if (!group) {
        group = { head: undefined, cause: { event: '?', from: '?', to: '?', at: row.at }, intents: [] };
        groups.set(key, group);
        items.push(group);
      }
      if (row.entry === 'event') {
        group.head = row;
        group.cause = { ...group.cause, event: row.name, at: row.at };
      } else if (row.entry === 'transition') {
        group.cause = { ...group.cause, from: row.from ?? '?', to: row.to ?? '?' };
      } else {
        group.intents.push({ row });
      }
      this.#remember(key, group.cause);
    }
    const lines: string[] = [];
    for (const item of items) {
      if ('entry' in item) lines.push(this.#outcomeLine(item, showObject));
      else lines.push(...groupLines(item, showObject));
    }
    return lines;
  }

  #jsonLines(rows: readonly TimelineRow[]): string[] {
    return rows.map((r) => {
      const key = `${r.ref.uid}#${r.seq}`;
      const known = this.#causes.get(key) ?? { event: '?', from: '?', to: '?', at: r.at };
      if (r.entry === 'event') this.#remember(key, { ...known, event: r.name, at: r.at });
      if (r.entry === 'transition') this.#remember(key, { ...known, from: r.from ?? '?', to: r.to ?? '?' });
      const cause = r.entry === 'intent' || r.entry === 'outcome' ? this.#causes.get(key) : undefined;
      const { ref, lsn, at, writtenAt, ...rest } = r;
      return JSON.stringify({ lsn, at, writtenAt, object: ref, ...rest, ...(cause ? { cause } : {}) });
    });
  }

  #outcomeLine(row: TimelineRow, showObject: boolean): string {
    const cause = this.#causes.get(`${row.ref.uid}#${row.seq}`);
    const how = row.recovered ? ', recovered after a restart' : '';
    const why = cause
      ? `  (asked at #${row.seq}: ${cause.event} in ${cause.from}${how})`
      : `  (asked at #${row.seq}${how})`;
    return `${row.at} ${who(row, showObject)}${intentNo(row)} ${row.name} -> ${outcomeText(row)}${why}`;
  }

  #remember(key: string, cause: Cause): void {
    this.#causes.delete(key);
    this.#causes.set(key, cause);
    if (this.#causes.size > MAX_REMEMBERED) this.#causes.delete(this.#causes.keys().next().value as string);
  }
}

/** The lines of a finished batch of rows, for one-shot printing. */
export function formatTimeline(rows: readonly TimelineRow[], opts: TimelineFormat = {}): string[] {
  return new TimelineFormatter(opts).format(rows);
}

/** A value in one short line: `{member: demo-0, peers: [a, b]}`, cut at `max` characters. */
export function compact(value: unknown, max = 120): string {
  const text = render(value);
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function groupLines(g: Group, showObject: boolean): string[] {
  const first = g.head ?? g.intents[0]?.row;
  if (!first) return [];
  const fields = g.head?.data && Object.keys(g.head.data).length > 0 ? ` ${compact(g.head.data, 80)}` : '';
  const move = g.cause.from === g.cause.to ? `stays ${g.cause.to}` : `${g.cause.from} -> ${g.cause.to}`;
  const head = `${g.cause.at} ${who(first, showObject)}#${first.seq} ${g.cause.event}${fields}  ${move}`;
  const intents = g.intents.map(({ row, outcome }) => {
    const params = row.data && Object.keys(row.data).length > 0 ? compact(row.data) : '';
    const took = outcome
      ? ` (+${elapsed(row.at, outcome.at)}${outcome.recovered ? ', recovered after a restart' : ''})`
      : '';
    return `    intent ${row.name}${params} ${intentNo(row)} -> ${outcome ? outcomeText(outcome) : 'open'}${took}`;
  });
  return [head, ...intents];
}

function who(row: TimelineRow, showObject: boolean): string {
  return showObject ? `${row.ref.kind}/${row.ref.name} ` : '';
}

function intentNo(row: TimelineRow): string {
  return `#${row.seq}.${row.intentId?.slice(row.intentId.lastIndexOf(':') + 1) ?? '?'}`;
}

function outcomeText(row: TimelineRow): string {
  if (!row.ok)
    return `error ${row.code ?? ''}: ${row.message ?? ''}${row.retryable === false ? ' (not retryable)' : ''}`;
  return row.data === undefined || row.data === null ? 'ok' : `ok ${compact(row.data, 80)}`;
}

function elapsed(from: string, to: string): string {
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms)) return '?';
  return ms < 1000 ? `${ms}ms` : ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

function render(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (typeof v === 'string') return /^[\w.:/@+=-]*$/.test(v) && v !== '' ? v : JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(render).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${k}: ${render(x)}`)
      .join(', ')}}`;
  }
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : typeof v;
}
