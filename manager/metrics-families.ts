/**
 * The kinds of Prometheus metric the manager exports, in the text exposition format: counters,
 * gauges (read at scrape time), labelled families read at scrape time, and histograms.
 */
import type { EtcdCluster, EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';

/** The caches the metrics read at scrape time (the controller's informers). */
export interface ObjectCaches {
  readonly EtcdCluster: { list(): readonly EtcdCluster[] };
  readonly EtcdSnapshot: { list(): readonly EtcdSnapshot[] };
  readonly EtcdSnapshotSchedule: { list(): readonly EtcdSnapshotSchedule[] };
}

/** A metric's labels, name to value. */
export type Labels = Readonly<Record<string, string>>;

const labelText = (labels: Labels): string => {
  const pairs = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return pairs.length ? `{${pairs.join(',')}}` : '';
};
const keyOf = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort());

/** Something rendered into the exposition: one metric family (or several). */
export interface Metric {
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

/** A gauge (or counter) whose labelled values are read when scraped; with none, its HELP and TYPE alone. */
export class Family implements Metric {
  readonly #head: string[];
  readonly #name: string;
  readonly #read: () => Iterable<readonly [Labels, number]>;
  constructor(name: string, help: string, read: () => Iterable<readonly [Labels, number]>, type = 'gauge') {
    this.#name = name;
    this.#read = read;
    this.#head = [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
  }
  render(): string[] {
    return [...this.#head, ...[...this.#read()].map(([labels, value]) => `${this.#name}${labelText(labels)} ${value}`)];
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
