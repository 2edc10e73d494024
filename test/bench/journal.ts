/**
 * Journal throughput: steps/s and recordStep / recordOutcome latency (p50, p99) with
 * synchronous=FULL and NORMAL, on a file in $JOURNAL_BENCH_DIR (default: the OS temp dir).
 * Then, on a journal filled with history, the cost of a manager's start (open, openIntents),
 * of the CLI's query for a cluster and its members, and of prune.
 * Bounded: each phase runs for JOURNAL_BENCH_MS (default 1500 ms; the fill twice that) or 20,000 steps.
 * Run: node test/bench/journal.ts   → prints a table, writes test/bench/results/journal.json
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../../journal/journal.ts';
import type { ObjectRef, Step } from '../../journal/types.ts';

/** Figures for one synchronous mode. */
export interface ModeResult {
  readonly synchronous: 'FULL' | 'NORMAL';
  readonly steps: number;
  readonly seconds: number;
  readonly stepsPerSecond: number;
  readonly recordStepMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly recordOutcomeMs: { readonly p50: number; readonly p99: number; readonly max: number };
}

/** Start-up and query costs on a journal that already holds history. */
export interface SizeResult {
  readonly objects: number;
  readonly steps: number;
  readonly rows: number;
  readonly openIntents: number;
  readonly fileBytes: number;
  readonly ms: {
    readonly open: number;
    readonly openIntents: number;
    readonly clusterTimeline: number;
    readonly prune: number;
  };
  readonly clusterTimelineRows: number;
  readonly prunedRows: number;
}

const BUDGET_MS = Number(process.env.JOURNAL_BENCH_MS ?? 1500);
const MAX_STEPS = 20_000;
const INTENTS_PER_STEP = 2;

function percentiles(samples: number[]): ModeResult['recordStepMs'] {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => round(s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0);
  return { p50: at(0.5), p99: at(0.99), max: round(s.at(-1) ?? 0) };
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** Runs the journal as the runtime does: one step with two intents, then one outcome per intent. */
function runMode(dir: string, synchronous: 'FULL' | 'NORMAL'): ModeResult {
  const journal = Journal.open(join(dir, `bench-${synchronous}.db`), { synchronous });
  const refs: ObjectRef[] = Array.from({ length: 10 }, (_, i) => ({
    uid: `uid-${i}`,
    kind: 'EtcdMember',
    namespace: 'bench',
    name: `demo-${i}`,
    cluster: 'demo',
  }));
  const stepMs: number[] = [];
  const outcomeMs: number[] = [];
  const start = performance.now();
  let steps = 0;
  while (steps < MAX_STEPS && performance.now() - start < BUDGET_MS) {
    const ref = refs[steps % refs.length] as ObjectRef;
    const step: Step = {
      machine: 'member',
      event: { type: 'etcd.member.healthChecked', at: new Date(), healthy: true, revision: steps },
      from: 'voter',
      to: 'voter',
      state: {
        value: 'voter',
        context: { memberID: '8e9e05c52164694d', peerURL: 'http://demo-0.demo.bench.svc:2380', step: steps },
      },
      intents: Array.from({ length: INTENTS_PER_STEP }, (_, i) => ({
        type: 'patchStatus',
        params: { member: ref.name, index: i },
      })),
    };
    let t = performance.now();
    const { intentIds } = journal.recordStep(ref, step);
    stepMs.push(performance.now() - t);
    for (const id of intentIds) {
      t = performance.now();
      journal.recordOutcome(ref, id, { ok: true, result: { patched: true } });
      outcomeMs.push(performance.now() - t);
    }
    steps++;
  }
  const seconds = (performance.now() - start) / 1000;
  journal.close();
  return {
    synchronous,
    steps,
    seconds: round(seconds),
    stepsPerSecond: Math.round(steps / seconds),
    recordStepMs: percentiles(stepMs),
    recordOutcomeMs: percentiles(outcomeMs),
  };
}

/** Fills a journal with history (NORMAL, for speed), then times what a restarting manager and the CLI do. */
function atSize(dir: string): SizeResult {
  const path = join(dir, 'bench-size.db');
  const objects = 30;
  const refs: ObjectRef[] = Array.from({ length: objects }, (_, i) =>
    i % 3 === 0
      ? { uid: `c-${i}`, kind: 'EtcdCluster', namespace: 'bench', name: `c${i}` }
      : {
          uid: `m-${i}`,
          kind: 'EtcdMember',
          namespace: 'bench',
          name: `c${i - (i % 3)}-${i % 3}`,
          cluster: `c${i - (i % 3)}`,
        },
  );
  const filling = Journal.open(path, { synchronous: 'NORMAL' });
  const start = performance.now();
  let steps = 0;
  while (steps < MAX_STEPS && performance.now() - start < 2 * BUDGET_MS) {
    const ref = refs[steps % objects] as ObjectRef;
    const { intentIds } = filling.recordStep(ref, {
      machine: ref.kind === 'EtcdCluster' ? 'cluster' : 'member',
      event: { type: 'etcd.member.healthChecked', at: new Date(), revision: steps },
      from: 'Steady',
      to: 'Steady',
      state: { value: 'Steady', context: { step: steps } },
      intents: [{ type: 'patchStatus', params: { n: steps } }],
    });
    // One intent in a hundred is left open, as a crash would leave it.
    if (steps % 100 !== 7) filling.recordOutcome(ref, intentIds[0] ?? '', { ok: true });
    steps++;
  }
  filling.close();
  const time = <R>(fn: () => R): [R, number] => {
    const t = performance.now();
    const r = fn();
    return [r, round(performance.now() - t)];
  };
  const [journal, openMs] = time(() => Journal.open(path));
  const [open, openIntentsMs] = time(() => journal.openIntents());
  const [rows, timelineMs] = time(() => journal.timeline({ uids: ['c-0', 'm-1', 'm-2'] }));
  const stats = journal.stats();
  const [pruned, pruneMs] = time(() => journal.prune({ keep: 100 }));
  journal.close();
  return {
    objects,
    steps,
    rows: stats.rows,
    openIntents: open.length,
    fileBytes: stats.bytes,
    ms: { open: openMs, openIntents: openIntentsMs, clusterTimeline: timelineMs, prune: pruneMs },
    clusterTimelineRows: rows.length,
    prunedRows: pruned,
  };
}

const dir = mkdtempSync(join(process.env.JOURNAL_BENCH_DIR ?? tmpdir(), 'journal-bench-'));
try {
  const results = [runMode(dir, 'FULL'), runMode(dir, 'NORMAL')];
  const size = atSize(dir);
  const out = {
    bench: 'journal',
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    intentsPerStep: INTENTS_PER_STEP,
    budgetMsPerMode: BUDGET_MS,
    note: 'a step = recordStep (event, transition, 2 intents, snapshot) + 2 recordOutcome, each its own fsynced transaction under FULL',
    results,
    atSize: size,
  };
  const resultsDir = join(import.meta.dirname, 'results');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'journal.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log('synchronous  steps  steps/s  recordStep p50/p99 ms  recordOutcome p50/p99 ms');
  for (const r of results) {
    const cells = [
      r.synchronous.padEnd(11),
      String(r.steps).padStart(5),
      String(r.stepsPerSecond).padStart(8),
      `${r.recordStepMs.p50} / ${r.recordStepMs.p99}`.padStart(22),
      `${r.recordOutcomeMs.p50} / ${r.recordOutcomeMs.p99}`.padStart(25),
    ];
    console.log(cells.join('  '));
  }
  console.log(
    `\nat size: ${size.steps} steps of ${size.objects} objects, ${size.rows} rows, ${(size.fileBytes / 1e6).toFixed(1)} MB, ${size.openIntents} open intents`,
  );
  console.log(
    `  open ${size.ms.open} ms, openIntents ${size.ms.openIntents} ms, cluster+members timeline ${size.ms.clusterTimeline} ms ` +
      `(${size.clusterTimelineRows} rows), prune to 100 steps ${size.ms.prune} ms (${size.prunedRows} rows)`,
  );
  console.log(`wrote ${join('test', 'bench', 'results', 'journal.json')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
