/**
 * What the debug page shows, read from the journal the manager writes: the index of objects, an
 * object's overlay (where it stands, the path it took) and its timeline, and every committed
 * write turned into updates for the page's live connections. Writes are heard through
 * JournalKeeper.watch, in-process, as they commit: nothing polls the file.
 */
import { redactText, type Journal, type ObjectOverview, type TimelineRow } from '../../journal/index.ts';
import {
  isMachineName,
  machineChart,
  overlayOf,
  problemText,
  renderChart,
  stepsOf,
  type Chart,
  type JournalStep,
  type MachineName,
} from '../../statechart/index.ts';
import type { KeeperChange } from '../journal-keeper.ts';
import { describe, lineOf, type LiveUpdate, type ObjectLine, type ObjectView, type TimelinePage } from './views.ts';

export type { LiveUpdate, ObjectLine, ObjectView, OverlayView, TimelinePage } from './views.ts';

/** Where the page reads: the journal in use (none before the manager opened one), and its writes. */
export interface JournalSource {
  readonly current: Journal | undefined;
  watch(listener: (change: KeeperChange) => void): () => void;
}

/** Thrown while the manager has no journal open (it is not leading yet, or a replacement failed). */
export class NoJournalError extends Error {
  override readonly name = 'NoJournalError';
  readonly code = 'ERR_DEBUG_NO_JOURNAL';
}

interface Subscriber {
  readonly listener: (update: LiveUpdate) => void;
  readonly uid: string | undefined;
}

/** Rendered overlay SVGs kept (one per object, for its latest step). */
const OVERLAY_SVGS = 16;

/** The debug page's read model over a journal source. */
export class LiveObjects {
  readonly #source: JournalSource;
  readonly #running: () => ReadonlySet<string> | undefined;
  readonly #onError: (err: unknown) => void;
  readonly #subscribers = new Set<Subscriber>();
  readonly #charts = new Map<MachineName, Chart>();
  readonly #chartSvgs = new Map<MachineName, Promise<string>>();
  readonly #overlaySvgs = new Map<string, { seq: number; svg: Promise<string> }>();
  /** Each watched object's journaled steps (event, from, to), read once and then kept up by the writes. */
  readonly #steps = new Map<string, JournalStep[]>();
  readonly #pending: KeeperChange[] = [];
  readonly #unwatch: () => void;

  constructor(options: {
    readonly source: JournalSource;
    readonly running?: () => ReadonlySet<string> | undefined;
    readonly onError?: (err: unknown) => void;
  }) {
    this.#source = options.source;
    this.#running = options.running ?? (() => undefined);
    this.#onError = options.onError ?? (() => undefined);
    this.#unwatch = options.source.watch((change) => {
      // Told inside the writer's step: keep only the change, and work after the step returns.
      if (this.#pending.push(change) === 1) setImmediate(() => this.#flush());
    });
  }

  /** The newest lsn of the journal: a client that loaded its data after reading it misses nothing after it. */
  lsn(): number {
    return this.#journal().lastLsn();
  }

  /** Every object, with where its machine stands. */
  index(): ObjectLine[] {
    const running = this.#running();
    return this.#journal()
      .overview()
      .map((o) => lineOf(o, running));
  }

  /** One object with its overlay; undefined when the journal has no such uid. */
  view(uid: string): ObjectView | undefined {
    const o = this.#journal().overview(uid)[0];
    return o && this.#viewOf(o, this.#running());
  }

  /** Up to `steps` whole steps of an object before step `before` (default: its newest). */
  timeline(uid: string, before?: number, steps = 50): TimelinePage {
    const journal = this.#journal();
    const oldest = journal.timeline({ uid }, { limit: 1 })[0]?.seq;
    if (oldest === undefined) return { rows: [], older: null };
    const top = before ?? (journal.snapshot(uid)?.seq ?? oldest) + 1;
    // Sequence numbers may jump (a step forced ahead after a resume): widen until enough steps.
    let rows: TimelineRow[];
    for (let span = steps; ; span *= 4) {
      const after = Math.max(top - 1 - span, oldest - 1);
      rows = journal.timeline({ uid }, { afterSeq: after, beforeSeq: top });
      if (new Set(rows.map((r) => r.seq)).size >= steps || after < oldest) break;
    }
    const seqs = [...new Set(rows.map((r) => r.seq))].sort((a, b) => a - b).slice(-steps);
    const first = seqs[0];
    const page = first === undefined ? [] : rows.filter((r) => r.seq >= first);
    return { rows: page, older: first !== undefined && first > oldest ? first : null };
  }

  /** An object's rows after `lsn`, at most `limit`: what a page that reconnects missed. */
  rowsAfter(uid: string, lsn: number, limit: number): TimelineRow[] {
    return this.#journal().timeline({ uid }, { afterLsn: lsn, limit });
  }

  /** A machine's chart, every arrow classed with its edge id; rendered once per machine. */
  chartSvg(machine: MachineName): Promise<string> {
    let svg = this.#chartSvgs.get(machine);
    if (!svg) {
      svg = renderChart(this.#chart(machine), 'svg', undefined, { edgeClasses: true });
      this.#chartSvgs.set(machine, svg);
      svg.catch(() => this.#chartSvgs.delete(machine));
    }
    return svg;
  }

  /** The object's chart with the overlay drawn in, as `etcd-operator statechart NAME --db` draws it; one render per step. */
  overlaySvg(uid: string): Promise<string> | undefined {
    const o = this.#journal().overview(uid)[0];
    if (!o || !isMachineName(o.machine)) return undefined;
    const kept = this.#overlaySvgs.get(uid);
    if (kept?.seq === o.seq) return kept.svg;
    const chart = this.#chart(o.machine);
    const svg = Promise.resolve().then(() => renderChart(chart, 'svg', overlayOf(chart, this.#overlayInput(o))));
    this.#overlaySvgs.delete(uid);
    this.#overlaySvgs.set(uid, { seq: o.seq, svg });
    if (this.#overlaySvgs.size > OVERLAY_SVGS)
      this.#overlaySvgs.delete(this.#overlaySvgs.keys().next().value as string);
    svg.catch(() => this.#overlaySvgs.delete(uid));
    return svg;
  }

  /** Hears every update (or, with `uid`, that object's, with its view); returns the unsubscribe. */
  subscribe(listener: (update: LiveUpdate) => void, uid?: string): () => void {
    const subscriber = { listener, uid };
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  /** Stops hearing the journal. */
  close(): void {
    this.#unwatch();
    this.#subscribers.clear();
  }

  #journal(): Journal {
    const journal = this.#source.current;
    if (!journal) throw new NoJournalError('the manager has no journal open yet (it opens it once it leads)');
    return journal;
  }

  #chart(machine: MachineName): Chart {
    let chart = this.#charts.get(machine);
    if (!chart) this.#charts.set(machine, (chart = machineChart(machine)));
    return chart;
  }

  #viewOf(o: ObjectOverview, running: ReadonlySet<string> | undefined): ObjectView {
    const line = lineOf(o, running);
    if (!isMachineName(o.machine)) return { ...line, overlay: null, overlayError: `no chart for machine ${o.machine}` };
    try {
      const overlay = overlayOf(this.#chart(o.machine), this.#overlayInput(o));
      const view = { ...overlay, edges: Object.fromEntries(overlay.edges), stays: Object.fromEntries(overlay.stays) };
      return { ...line, overlay: view, overlayError: null };
    } catch (err) {
      return { ...line, overlay: null, overlayError: err instanceof Error ? err.message : String(err) };
    }
  }

  #overlayInput(o: ObjectOverview) {
    const journal = this.#journal();
    let steps = this.#steps.get(o.ref.uid);
    if (!steps) this.#steps.set(o.ref.uid, (steps = stepsOf(journal.timeline({ uid: o.ref.uid }))));
    const failed = o.lastError?.current
      ? {
          name: o.lastError.intent,
          seq: o.lastError.seq,
          ok: false,
          code: o.lastError.code,
          message: o.lastError.message,
        }
      : undefined;
    const problem = problemText(o.openIntents > 0 ? journal.openIntents(o.ref.uid) : [], failed);
    return {
      object: `${o.ref.kind} ${o.ref.namespace}/${o.ref.name}`,
      steps,
      stage: o.stage,
      now: describe(o),
      lastSeq: o.seq,
      problem: problem === null ? null : redactText(problem),
    };
  }

  #flush(): void {
    const changes = this.#pending.splice(0);
    try {
      if (changes.some((c) => c.kind === 'replaced')) {
        // A new journal, numbered from 1 again: every page starts over.
        this.#steps.clear();
        this.#overlaySvgs.clear();
        this.#tell({ kind: 'reset' });
        return;
      }
      const rowsOf = new Map<string, TimelineRow[]>();
      for (const change of changes) {
        if (change.kind === 'forgotten') {
          rowsOf.delete(change.uid);
          this.#steps.delete(change.uid);
          this.#overlaySvgs.delete(change.uid);
          this.#tell({ kind: 'gone', uid: change.uid });
        } else if (change.kind === 'appended') {
          for (const row of change.rows) rowsOf.set(row.ref.uid, [...(rowsOf.get(row.ref.uid) ?? []), row]);
        }
      }
      if (rowsOf.size === 0 || this.#subscribers.size === 0) {
        for (const [uid, rows] of rowsOf) this.#keepSteps(uid, rows);
        return;
      }
      const running = this.#running();
      for (const [uid, rows] of rowsOf) {
        this.#keepSteps(uid, rows);
        const o = this.#journal().overview(uid)[0];
        if (!o) continue;
        const wanted = [...this.#subscribers].some((s) => s.uid === uid);
        const view = wanted ? this.#viewOf(o, running) : undefined;
        const lsn = rows.at(-1)?.lsn ?? 0;
        this.#tell({ kind: 'object', lsn, line: lineOf(o, running), rows, ...(view ? { view } : {}) });
      }
    } catch (err) {
      this.#onError(err);
    }
  }

  /** Adds the new steps among `rows` to the object's kept steps, if they are kept. */
  #keepSteps(uid: string, rows: readonly TimelineRow[]): void {
    const steps = this.#steps.get(uid);
    if (!steps) return;
    const last = steps.at(-1)?.seq ?? 0;
    steps.push(...stepsOf(rows).filter((s) => s.seq > last));
  }

  #tell(update: LiveUpdate): void {
    for (const s of this.#subscribers) {
      if (update.kind === 'object' && s.uid !== undefined && s.uid !== update.line.uid) continue;
      // The index needs the line only.
      const told = update.kind === 'object' && s.uid === undefined ? { ...update, rows: [], view: undefined } : update;
      try {
        s.listener(told);
      } catch (err) {
        this.#onError(err);
      }
    }
  }
}
