/**
 * What the manager's journal says about a run, read-only while the manager writes: the
 * event-to-intent latency of every step that emitted intents (the event's `at` against the
 * intent row's `writtenAt`, to the millisecond), and, per measured cluster, where its time
 * went: effects that failed and were retried, and the waits between a failure and its retry.
 */
import { Journal } from '../../../journal/index.ts';
import type { TimelineRow } from '../../../journal/index.ts';
import { percentile } from './poll.ts';

/** Event-to-intent latency over every step that emitted intents, ms. */
export interface EventToIntent {
  readonly steps: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Failed effects of one kind and code, and the time from each failure to the retry's intent. */
export interface Retried {
  readonly intent: string;
  readonly code: string;
  readonly count: number;
  /** Failure outcome -> the next intent of the same kind on the same object, summed, ms. */
  readonly waitMs: number;
}

/** One row of a compact trace: ms after `t0`, object, entry, name, and the outcome's code or ok. */
export type TraceRow = readonly [number, string, string, string, string?];

const ms = (iso: string): number => Date.parse(iso);

/** The journal's rows for every object of a namespace, in write order. */
export function rowsOf(path: string, namespace: string): TimelineRow[] {
  const journal = Journal.open(path, { readonly: true });
  try {
    const uids = journal
      .objects()
      .filter((o) => o.ref.namespace === namespace)
      .map((o) => o.ref.uid);
    return journal.timeline({ uids });
  } finally {
    journal.close();
  }
}

/** Event-to-intent latency over the given rows: one figure per step with intents (its first intent). */
export function eventToIntent(rows: readonly TimelineRow[]): EventToIntent {
  const xs = rows
    .filter((r) => r.entry === 'intent' && r.intentId?.endsWith(':0'))
    .map((r) => ms(r.writtenAt) - ms(r.at));
  return { steps: xs.length, p50: percentile(xs, 0.5), p99: percentile(xs, 0.99), max: Math.max(0, ...xs) };
}

/** Failed effects by kind and code, with the wait until each was tried again. */
export function retries(rows: readonly TimelineRow[]): Retried[] {
  const found = new Map<string, { intent: string; code: string; count: number; waitMs: number }>();
  for (const [i, r] of rows.entries()) {
    if (r.entry !== 'outcome' || r.ok !== false) continue;
    const next = rows.slice(i + 1).find((n) => n.entry === 'intent' && n.name === r.name && n.ref.uid === r.ref.uid);
    const key = `${r.name} ${r.code ?? ''}`;
    const f = found.get(key) ?? { intent: r.name, code: r.code ?? '', count: 0, waitMs: 0 };
    f.count += 1;
    f.waitMs += next ? ms(next.writtenAt) - ms(r.writtenAt) : 0;
    found.set(key, f);
  }
  return [...found.values()];
}

/** The rows as a compact trace from `t0` (epoch ms): events, intents and outcomes with their codes. */
export function trace(rows: readonly TimelineRow[], t0: number): TraceRow[] {
  return rows
    .filter((r) => r.entry !== 'transition')
    .map((r): TraceRow => {
      const t = ms(r.writtenAt) - t0;
      const outcome = r.entry === 'outcome' ? [r.ok ? 'ok' : (r.code ?? 'failed')] : [];
      const to =
        r.entry === 'event'
          ? rows.find((x) => x.entry === 'transition' && x.ref.uid === r.ref.uid && x.seq === r.seq)?.to
          : undefined;
      return [t, r.ref.name, r.entry, to ? `${r.name} -> ${to}` : r.name, ...outcome] as unknown as TraceRow;
    });
}
