/**
 * The operator against its floors, on one local cluster (control plane, nodes, storage) with one
 * manager: per size (1, 3, 5) and repetition (BENCH_REPS, default 3), the learner floor (the same
 * Pods joined one learner at a time by a minimal script, floor.ts), the static floor (the same Pods
 * started at once with the full initial cluster) and the operator (EtcdCluster applied -> Available),
 * each in a fresh namespace; at size 3 also a member replacement and a scale-up to 4 from rest.
 * Event-to-intent latency comes from the manager's journal (exact per step; the /metrics
 * histogram's buckets are shown beside it as a cross-check).
 * Run: make bench   → prints a table, writes test/bench/results/latest.json
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TimelineRow } from '../../journal/index.ts';
import { installCrds } from '../../localcluster/crds.ts';
import { startLocalCluster } from '../../localcluster/index.ts';
import { startManager, type ManagerProcess } from '../../localcluster/manager-process.ts';
import { clientsOf } from '../effects/kubernetes/e2e-context.ts';
import { eventToIntent, retries, rowsOf, trace, type Retried, type TraceRow } from './operator/journal-figures.ts';
import {
  dropCluster,
  dropNamespace,
  measureFloor,
  measureOperator,
  measureStaticFloor,
  REST_MS,
  type FloorResult,
  type OperatorRun,
} from './operator/measure.ts';
import { spread, type Spread } from './operator/poll.ts';
import { measureTLSBootstrap } from './operator/tls.ts';
import { TestPki } from '../effects/etcd/test-pki.ts';

const REPS = Number(process.env.BENCH_REPS ?? 3);
const SIZES = (process.env.BENCH_SIZES ?? '1,3,5').split(',').map(Number);
/** BENCH_BOOTSTRAP_ONLY=1: apply -> Available and its static floor only (no learner floor, replacement, scale-up or TLS). */
const BOOTSTRAP_ONLY = process.env.BENCH_BOOTSTRAP_ONLY === '1';
const git = (...args: string[]): string =>
  execFileSync('git', args, { cwd: import.meta.dirname, encoding: 'utf8' }).trim();
/** The commit measured, and whether the working tree differed from it (results aside). */
const source = (): { commit: string; dirty: boolean } => ({
  commit: git('rev-parse', 'HEAD'),
  dirty: git('status', '--porcelain', '--untracked-files=no', '--', ':/', ':(top,exclude)test/bench/results') !== '',
});
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)} load ${load()}] ${line}`);

/** An operator run with what its journal says. */
interface Measured extends OperatorRun {
  readonly load: string;
  readonly retries: readonly Retried[];
}

/** A measurement that did not finish: reported, and left out of the figures. */
interface Failure {
  readonly namespace: string;
  readonly error: string;
}

/** Runs one measurement; a failure is logged and noted, and the run goes on. */
async function attempt(namespace: string, failures: Failure[], measure: () => Promise<void>): Promise<void> {
  try {
    await measure();
  } catch (err) {
    const error =
      err instanceof Error
        ? `${err.message}${err.cause instanceof Error ? ` (${err.cause.message})` : ''}`
        : String(err);
    failures.push({ namespace, error });
    log(`${namespace} FAILED: ${error}`);
  }
}

/** The bucket of a /metrics histogram that holds the p-th observation, as `<= le` seconds. */
function histogramBucket(metrics: string, name: string, p: number): string {
  const buckets = [...metrics.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm'))].map((m) => ({
    le: m[1] ?? '',
    n: Number(m[2]),
  }));
  const total = buckets.at(-1)?.n ?? 0;
  return `<= ${buckets.find((b) => b.n >= Math.ceil(p * total))?.le ?? '?'} s`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-bench-'));
  const startedLoad = load();
  log(`local cluster in ${dir}`);
  const cluster = await startLocalCluster({
    dir,
    node: true,
    log: (line) => appendFileSync(join(dir, 'cluster.log'), `${line}\n`),
  });
  let manager: ManagerProcess | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping the manager and the local cluster; their logs stay in ${dir}`);
      void Promise.allSettled([manager?.kill(), cluster.stop()]).finally(() => process.exit(130));
    });
  }
  let failed = false;
  try {
    await installCrds(cluster.kubectl);
    const kubeconfig = cluster.kubeconfigPath;
    manager = await startManager({
      kubeconfig,
      dir: join(dir, 'manager'),
      onLine: (l) => appendFileSync(join(dir, 'manager.log'), `${JSON.stringify(l)}\n`),
    });
    const journal = join(dir, 'manager', 'journal.db');
    const kube = clientsOf(kubeconfig);
    const floors: FloorResult[] = [];
    const staticFloors: FloorResult[] = [];
    const runs: Measured[] = [];
    const tlsRuns: OperatorRun[] = [];
    const pki = await TestPki.create('etcd-operator-bench-pki-');
    const traces: Record<string, TraceRow[]> = {};
    const allRows: TimelineRow[] = [];
    const failures: Failure[] = [];
    try {
      for (let rep = 0; rep < REPS; rep++) {
        for (const size of SIZES) {
          const sns = `floor-whole-${size}-${rep}`;
          await attempt(sns, failures, async () => {
            const floor = await measureStaticFloor(kube, sns, size);
            staticFloors.push(floor);
            log(`static floor ${size}: ${floor.totalMs} ms`);
          });
          await dropNamespace(kube.core, sns).catch((err: unknown) => log(String(err)));

          const fns = `floor-${size}-${rep}`;
          if (!BOOTSTRAP_ONLY)
            await attempt(fns, failures, async () => {
              const floor = await measureFloor(kube, fns, size);
              floors.push(floor);
              log(
                `floor ${size}: ${floor.totalMs} ms (seed Ready ${floor.seedReadyMs}, joins ${floor.joins.map((j) => j.totalMs).join('/')})${floor.scaleUp ? `, +1 from rest ${floor.scaleUp.totalMs} ms` : ''}`,
              );
            });
          if (!BOOTSTRAP_ONLY) await dropNamespace(kube.core, fns).catch((err: unknown) => log(String(err)));

          const ons = `operator-${size}-${rep}`;
          await attempt(ons, failures, async () => {
            const before = load();
            const run = await measureOperator(kube, kubeconfig, ons, size, !BOOTSTRAP_ONLY);
            const rows = rowsOf(journal, ons);
            allRows.push(...rows);
            runs.push({ ...run, load: before, retries: retries(rows) });
            if (rep === 0 && size > 1) traces[ons] = trace(rows, run.t0);
            log(
              `operator ${size}: Available ${run.availableMs} ms${run.replacementMs ? `, replacement ${run.replacementMs} ms, scale 3->4 ${run.scaleUpMs} ms` : ''}`,
            );
          });
          if (await dropCluster(kube, ons).catch(() => true))
            log(`operator ${size}: the EtcdCluster was not gone after its deletion; finalizers stripped`);
          await dropNamespace(kube.core, ons).catch((err: unknown) => log(String(err)));
          if (size !== 3 || BOOTSTRAP_ONLY) continue;

          // The same bootstrap with client and peer TLS, beside the plaintext one in this run.
          const tns = `operator-tls-${size}-${rep}`;
          await attempt(tns, failures, async () => {
            const run = await measureTLSBootstrap(kube, pki, tns, size);
            tlsRuns.push(run);
            log(`operator ${size} with TLS: Available ${run.availableMs} ms`);
          });
          if (await dropCluster(kube, tns).catch(() => true))
            log(`operator ${size} with TLS: the EtcdCluster was not gone after its deletion; finalizers stripped`);
          await dropNamespace(kube.core, tns).catch((err: unknown) => log(String(err)));
        }
      }
      const metrics = await (await fetch(`http://127.0.0.1:${manager.port}/metrics`)).text();
      pki.remove();
      report({
        floors,
        staticFloors,
        runs,
        tlsRuns,
        failures,
        traces,
        e2i: eventToIntent(allRows),
        metrics,
        startedLoad,
      });
    } finally {
      await manager.stop();
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await cluster.stop().catch((err: unknown) => log(`stopping the local cluster: ${String(err)}`));
    if (failed) log(`kept ${dir} (cluster.log, manager.log, manager/journal.db)`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

interface Report {
  readonly failures: readonly Failure[];
  readonly floors: readonly FloorResult[];
  /** Every member started at once with the full initial cluster. */
  readonly staticFloors: readonly FloorResult[];
  readonly runs: readonly Measured[];
  /** The 3-member bootstraps with client and peer TLS. */
  readonly tlsRuns: readonly OperatorRun[];
  readonly traces: Readonly<Record<string, TraceRow[]>>;
  readonly e2i: ReturnType<typeof eventToIntent>;
  readonly metrics: string;
  readonly startedLoad: string;
}

function report(r: Report): void {
  const pick = (xs: readonly (number | undefined)[]): Spread => spread(xs.filter((x): x is number => x !== undefined));
  const available = Object.fromEntries(
    SIZES.map((n) => [
      n,
      {
        operator: pick(r.runs.filter((x) => x.size === n).map((x) => x.availableMs)),
        floor: pick(r.floors.filter((x) => x.size === n).map((x) => x.totalMs)),
        staticFloor: pick(r.staticFloors.filter((x) => x.size === n).map((x) => x.totalMs)),
      },
    ]),
  );
  const scaleUp = {
    operator: pick(r.runs.map((x) => x.scaleUpMs)),
    floor: pick(r.floors.map((x) => x.scaleUp?.totalMs)),
  };
  const replacement = { operator: pick(r.runs.map((x) => x.replacementMs)) };
  const tls = { operator: pick(r.tlsRuns.map((x) => x.availableMs)) };
  const histogram = {
    p50: histogramBucket(r.metrics, 'etcd_operator_event_to_intent_seconds', 0.5),
    p99: histogramBucket(r.metrics, 'etcd_operator_event_to_intent_seconds', 0.99),
  };
  const out = {
    bench: 'operator',
    at: new Date().toISOString(),
    ...source(),
    node: process.version,
    cpus: cpus().length,
    etcd: '3.6.16',
    reps: REPS,
    restMs: REST_MS,
    load: { start: r.startedLoad, end: load() },
    available,
    scaleUp,
    replacement,
    tlsAvailable3: tls,
    eventToIntentMs: { journal: r.e2i, histogram },
    failures: r.failures,
    floors: r.floors,
    staticFloors: r.staticFloors,
    runs: r.runs,
    tlsRuns: r.tlsRuns,
    traces: r.traces,
  };
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(out, null, 1)}\n`);

  const f = (s: Spread | undefined): string =>
    (s && s.runs.length ? `${s.median} (${s.min}-${s.max})` : '-').padStart(22);
  const gap = (a: Spread, b: Spread | undefined): string =>
    (b?.runs.length ? `${(a.median / Math.max(1, b.median)).toFixed(1)}x` : '').padStart(6);
  console.log(`\n${'ms, median (min-max)'.padEnd(32)}${'operator'.padStart(22)}${'floor'.padStart(22)}   gap`);
  for (const n of SIZES) {
    console.log(
      `${`apply -> Available, ${n} member${n > 1 ? 's' : ''}`.padEnd(32)}${f(available[n]?.operator)}${f(available[n]?.floor)}${gap(available[n]!.operator, available[n]?.floor)}`,
    );
    console.log(
      `${'  against the static floor'.padEnd(32)}${''.padStart(22)}${f(available[n]?.staticFloor)}${gap(available[n]!.operator, available[n]?.staticFloor)}`,
    );
  }
  if (SIZES.includes(3) && !BOOTSTRAP_ONLY)
    console.log(
      `${'  the same, client+peer TLS'.padEnd(32)}${f(tls.operator)}${'-'.padStart(22)}${gap(tls.operator, available[3]?.operator)} of plaintext`,
    );
  if (!BOOTSTRAP_ONLY) {
    console.log(
      `${'scale-up 3 -> 4, from rest'.padEnd(32)}${f(scaleUp.operator)}${f(scaleUp.floor)}${gap(scaleUp.operator, scaleUp.floor)}`,
    );
    console.log(`${'member replacement (wiped, 3)'.padEnd(32)}${f(replacement.operator)}${'-'.padStart(22)}`);
  }
  console.log(
    `event -> intent, journal: p50 ${r.e2i.p50} ms, p99 ${r.e2i.p99} ms, max ${r.e2i.max} ms over ${r.e2i.steps} steps (histogram: p50 ${histogram.p50}, p99 ${histogram.p99})`,
  );
  for (const x of r.failures) console.log(`FAILED ${x.namespace}: ${x.error}`);
  console.log(
    `${cpus().length} cores, load ${r.startedLoad} at start, ${load()} at end; wrote ${join('test', 'bench', 'results', 'latest.json')}`,
  );
}

await main();
