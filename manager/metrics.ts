/**
 * The manager's Prometheus metrics, in the text exposition format: counters, gauges and
 * histograms with labels. Small on purpose: the few kinds /metrics needs, no dependency.
 * docs/metrics.md lists every metric and its labels: per cluster, member, schedule, object,
 * machine or intent kind, never per etcd key.
 */
import { ClusterMetrics } from './metrics-clusters.ts';
import { Counter, Family, Gauge, Histogram, type Labels, type Metric } from './metrics-families.ts';
import { processMetrics } from './metrics-process.ts';

export { Counter, Family, Gauge, Histogram, type Labels, type Metric } from './metrics-families.ts';

const FAST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
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
  readonly intentFailures = new Counter(
    'etcd_operator_intent_failures_total',
    'Intents whose effect failed, by kind and error code (ERR_...).',
  );
  readonly stepsEnded = new Counter(
    'etcd_operator_steps_ended_total',
    "Steps (a machine's top-level states) left, by machine, step and outcome: finished, failed (a failure retrying cannot fix) or halted (the object went).",
  );
  readonly journalWriteSeconds = new Histogram(
    'etcd_operator_journal_write_seconds',
    'Time one journal write transaction took (steps, outcomes), committed or not.',
    FAST_BUCKETS,
  );
  /** What the manager knows of each cluster, member, snapshot and schedule (metrics-clusters.ts). */
  readonly clusters: ClusterMetrics;
  /** When each object's work last ended without an error, by work-queue key. */
  readonly #reconciled = new Map<string, number>();
  readonly #all: Metric[] = [
    this.steps,
    this.stepsEnded,
    this.intents,
    this.intentFailures,
    this.intentSeconds,
    this.eventToIntentSeconds,
    this.relists,
    this.errors,
    this.probes,
    this.journalReplaced,
    this.journalWriteSeconds,
  ];

  constructor(now: () => number = Date.now) {
    this.journalReplaced.inc({}, 0); // shown as 0 from the start, so an alert can compare
    this.clusters = new ClusterMetrics(now);
    this.#all.push(
      ...this.clusters.families(),
      new Family(
        'etcd_operator_object_last_reconcile_timestamp_seconds',
        'When the work of an object (EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule) last ended without an error.',
        () => [...this.#reconciled].map(([key, at]) => [keyLabels(key), at / 1000] as const),
      ),
      ...processMetrics(),
    );
  }

  /** The work of a work-queue key (`Kind/namespace/name`) ended without an error at `at` (ms). */
  reconciled(key: string, at: number): void {
    this.#reconciled.set(key, at);
  }

  /** Forgets an object that is gone. */
  forget(key: string): void {
    this.#reconciled.delete(key);
  }

  /** Counts a step of `machine` from state path `from` to `to`, and the step it left when the top state changed. */
  stepped(machine: string, from: string, to: string, outcome: () => 'finished' | 'failed' | 'halted'): void {
    const [left = from, entered = to] = [from.split('.')[0], to.split('.')[0]];
    this.steps.inc({ machine, to: entered });
    if (left !== entered) this.stepsEnded.inc({ machine, step: left, outcome: outcome() });
  }

  /** Counts an intent's outcome: its result, its time and, for a failure, its error code. */
  outcome(r: {
    readonly type: string;
    readonly ok: boolean;
    readonly recovered: boolean;
    readonly ms: number;
    readonly code?: string;
  }): void {
    this.intents.inc({ kind: r.type, result: r.recovered ? 'recovered' : r.ok ? 'succeeded' : 'failed' });
    this.intentSeconds.observe(r.ms / 1000, { kind: r.type });
    if (!r.ok) this.intentFailures.inc({ kind: r.type, code: r.code ?? 'ERR_EFFECT' });
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

/** A work-queue key's labels: `EtcdCluster/ns/demo` -> kind, namespace, name. */
function keyLabels(key: string): Labels {
  const [kind = '', namespace = '', name = ''] = key.split('/');
  return { kind, namespace, name };
}
