/**
 * The manager's Prometheus metrics, in the text exposition format: counters, gauges and
 * histograms with labels. Small on purpose: the few kinds /metrics needs, no dependency.
 */

type Labels = Readonly<Record<string, string>>;

const labelText = (labels: Labels): string => {
  const pairs = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return pairs.length ? `{${pairs.join(',')}}` : '';
};
const keyOf = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort());

interface Metric {
  render(): string[];
}

/** A value per label set that only goes up. */
export class Counter implements Metric {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  readonly #head: string[];
  readonly #name: string;
  constructor(name: string, help: string) {
    this.#name = name;
    this.#head = [`# HELP ${name} ${help}`, `# TYPE ${name} counter`];
  }
  /** Adds `by` (default 1). */
  inc(labels: Labels = {}, by = 1): void {
    const k = keyOf(labels);
    const found = this.#values.get(k);
    if (found) found.value += by;
    else this.#values.set(k, { labels, value: by });
  }
  /** The current value. */
  get(labels: Labels = {}): number {
    return this.#values.get(keyOf(labels))?.value ?? 0;
  }
  render(): string[] {
    return [...this.#head, ...[...this.#values.values()].map((v) => `${this.#name}${labelText(v.labels)} ${v.value}`)];
  }
}

/** A value read when scraped. */
export class Gauge implements Metric {
  readonly #head: string[];
  readonly #name: string;
  readonly #read: () => number;
  constructor(name: string, help: string, read: () => number) {
    this.#name = name;
    this.#read = read;
    this.#head = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
  }
  render(): string[] {
    return [...this.#head, `${this.#name} ${this.#read()}`];
  }
}

/** Observations counted into cumulative buckets (seconds). */
export class Histogram implements Metric {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  readonly #head: string[];
  readonly #name: string;
  readonly #buckets: readonly number[];
  constructor(name: string, help: string, buckets: readonly number[]) {
    this.#name = name;
    this.#buckets = buckets;
    this.#head = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
  }
  /** Counts one observation. */
  observe(value: number, labels: Labels = {}): void {
    const k = keyOf(labels);
    let s = this.#series.get(k);
    if (!s) this.#series.set(k, (s = { labels, counts: this.#buckets.map(() => 0), sum: 0, count: 0 }));
    for (const [i, le] of this.#buckets.entries()) if (value <= le) s.counts[i]! += 1;
    s.sum += value;
    s.count += 1;
  }
  render(): string[] {
    const lines = [...this.#head];
    for (const s of this.#series.values()) {
      for (const [i, le] of this.#buckets.entries())
        lines.push(`${this.#name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.counts[i]}`);
      lines.push(`${this.#name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(
        `${this.#name}_sum${labelText(s.labels)} ${s.sum}`,
        `${this.#name}_count${labelText(s.labels)} ${s.count}`,
      );
    }
    return lines;
  }
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Every metric the manager exports. */
export class ManagerMetrics {
  readonly steps = new Counter(
    'etcd_operator_steps_total',
    'Machine steps journaled, by machine and the state entered.',
  );
  readonly intents = new Counter(
    'etcd_operator_intents_total',
    'Intents carried out, by kind and result (succeeded, failed, recovered).',
  );
  readonly intentSeconds = new Histogram(
    'etcd_operator_intent_duration_seconds',
    'Time an effect handler took, by intent kind.',
    LATENCY_BUCKETS,
  );
  readonly eventToIntentSeconds = new Histogram(
    'etcd_operator_event_to_intent_seconds',
    'From an event to the intents it caused being journaled.',
    LATENCY_BUCKETS,
  );
  readonly relists = new Counter(
    'etcd_operator_informer_lists_total',
    'Lists made by the informers (first list and re-lists after 410 Gone), by resource.',
  );
  readonly errors = new Counter(
    'etcd_operator_reconcile_errors_total',
    'Reconciles that failed and were retried with back-off, by kind.',
  );
  readonly probes = new Counter(
    'etcd_operator_etcd_probes_total',
    'etcd member-list probes, by result (answered, unreachable).',
  );
  readonly journalReplaced = new Counter(
    'etcd_operator_journal_replaced_total',
    'Damaged journal files moved aside and replaced by a new one, at start or while running.',
  );
  readonly #all: Metric[] = [
    this.steps,
    this.intents,
    this.intentSeconds,
    this.eventToIntentSeconds,
    this.relists,
    this.errors,
    this.probes,
    this.journalReplaced,
  ];

  constructor() {
    this.journalReplaced.inc({}, 0); // shown as 0 from the start, so an alert can compare
    // The process's memory under the names Prometheus's own clients give it: the resident set
    // beside the V8 heap's live objects and its committed size tell garbage from growth.
    this.gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage.rss());
    this.gauge('nodejs_heap_size_total_bytes', 'V8 heap committed, bytes.', () => process.memoryUsage().heapTotal);
    this.gauge('nodejs_heap_size_used_bytes', 'V8 heap in use, bytes.', () => process.memoryUsage().heapUsed);
    this.gauge('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript, bytes.', () => {
      return process.memoryUsage().external;
    });
  }

  /** Adds a gauge read at scrape time. */
  gauge(name: string, help: string, read: () => number): void {
    this.#all.push(new Gauge(name, help, read));
  }

  /** The exposition text. */
  render(): string {
    return this.#all.flatMap((m) => m.render()).join('\n') + '\n';
  }
}
