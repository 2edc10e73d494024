/**
 * The manager at scale, on the local cluster (needs root): BENCH_SCALE_LIVE (default 50)
 * one-member EtcdClusters and BENCH_SCALE_PARKED (default 950) parked at 0, applied at once in one
 * namespace, with one manager. Measured: the time until every cluster is settled (Steady with its
 * member ready, or Dormant), event-to-intent p50/p99 from the journal over that load, the
 * manager's peak RSS (VmHWM) and its RSS once settled and at rest, and its CPU over
 * BENCH_SCALE_REST_S (default 60) seconds of rest, with the etcd probes it made meanwhile.
 * BENCH_SCALE_HEAP=DIR writes a heap snapshot of the manager at rest into DIR (for Chrome's
 * DevTools or test/bench/heap-summary.ts).
 * Run: make bench-scale → prints a table, writes test/bench/results/scale.json
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { apiVersion } from '../../api/v1alpha1/index.ts';
import { installCrds } from '../../localcluster/crds.ts';
import { startLocalCluster } from '../../localcluster/index.ts';
import { startManager, type ManagerProcess } from '../../localcluster/manager-process.ts';
import { clientsOf, createNamespace, until } from '../effects/kubernetes/e2e-context.ts';
import { eventToIntent, rowsOf } from './operator/journal-figures.ts';
import { percentile } from './operator/poll.ts';
import type { TimelineRow } from '../../journal/index.ts';

const LIVE = Number(process.env.BENCH_SCALE_LIVE ?? 50);
const PARKED = Number(process.env.BENCH_SCALE_PARKED ?? 950);
const REST_S = Number(process.env.BENCH_SCALE_REST_S ?? 60);
const HEAP_DIR = process.env.BENCH_SCALE_HEAP;
/** The manager's Node flags, as its image runs it (ENV NODE_OPTIONS in the Dockerfile); BENCH_SCALE_NODE_OPTIONS overrides. */
const NODE_OPTIONS = process.env.BENCH_SCALE_NODE_OPTIONS ?? '';
const NS = 'scale';
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of a process, MiB. */
function memory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMiB: Math.round(kib('VmRSS') / 1024), peakMiB: Math.round(kib('VmHWM') / 1024) };
}

/** CPU seconds (user + system) a process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** The commit measured, with `+` when the tree differs from it ('unknown' outside a git tree). */
function commit(): string {
  try {
    const git = (...args: string[]): string =>
      execFileSync('git', args, {
        cwd: import.meta.dirname,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? '+' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** The machine's load averages (1, 5, 15 min): CPU figures on a shared machine read beside them. */
const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** A counter of the manager's /metrics, summed over its labels. */
async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Event-to-intent by the kind of event that led to the step: where the slow steps come from. */
function byEvent(rows: readonly TimelineRow[]): Record<string, { steps: number; p50: number; p99: number }> {
  const events = new Map(rows.filter((r) => r.entry === 'event').map((r) => [`${r.ref.uid} ${r.seq}`, r.name]));
  const ms = new Map<string, number[]>();
  for (const r of rows) {
    if (r.entry !== 'intent' || !r.intentId?.endsWith(':0')) continue;
    const kind = events.get(`${r.ref.uid} ${r.seq}`) ?? '?';
    ms.set(kind, [...(ms.get(kind) ?? []), Date.parse(r.writtenAt) - Date.parse(r.at)]);
  }
  return Object.fromEntries(
    [...ms].map(([k, xs]) => [k, { steps: xs.length, p50: percentile(xs, 0.5), p99: percentile(xs, 0.99) }]),
  );
}

const cluster = (name: string, replicas: number): EtcdCluster =>
  ({
    apiVersion,
    kind: 'EtcdCluster',
    metadata: { name, namespace: NS },
    spec: { replicas, storage: { size: '64Mi' } },
  }) as EtcdCluster;

const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-scale-bench-'));
log(`local cluster in ${dir}; ${LIVE} live and ${PARKED} parked clusters`);
const local = await startLocalCluster({
  dir,
  node: true,
  log: (l) => appendFileSync(join(dir, 'cluster.log'), `${l}\n`),
});
let manager: ManagerProcess | undefined;
try {
  await installCrds(local.kubectl);
  const kube = clientsOf(local.kubeconfigPath);
  await createNamespace(kube.core, NS);
  manager = await startManager({
    kubeconfig: local.kubeconfigPath,
    dir: join(dir, 'manager'),
    args: ['--namespace', NS],
    env: {
      NODE_OPTIONS: [
        NODE_OPTIONS,
        ...(HEAP_DIR ? [`--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${HEAP_DIR}`] : []),
      ].join(' '),
    },
    onLine: (l) => {
      if (l.level >= 40) appendFileSync(join(dir, 'manager.log'), `${JSON.stringify(l)}\n`);
    },
  });
  const pid = manager.child.pid ?? 0;
  const items = [
    ...Array.from({ length: LIVE }, (_, i) => cluster(`live-${i}`, 1)),
    ...Array.from({ length: PARKED }, (_, i) => cluster(`parked-${i}`, 0)),
  ];
  const loadAtStart = load();
  const t0 = performance.now();
  const created = await local.kubectl(['create', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
  });
  if (created.code !== 0) throw new Error(`kubectl create: ${created.stderr}`);
  log(`${items.length} EtcdClusters created in ${Math.round(performance.now() - t0)} ms`);

  let peakDuring = 0;
  let parkedMs: number | undefined;
  let liveMs: number | undefined;
  const settledMs = await until(
    'every cluster settled',
    async () => {
      peakDuring = Math.max(peakDuring, memory(pid).rssMiB);
      const list = (await kube.custom.listNamespacedCustomObject({
        group: 'etcd-operator.dev',
        version: 'v1alpha1',
        namespace: NS,
        plural: 'etcdclusters',
      })) as { items: EtcdCluster[] };
      const done = list.items.filter((c) => {
        const s = c.status;
        if (s === undefined || s.observedGeneration !== c.metadata.generation) return false;
        return c.spec.replicas === 0
          ? s.observed?.step === 'Dormant'
          : s.observed?.step === 'Steady' && s.readyMembers === 1;
      });
      const parkedDone = done.filter((c) => c.spec.replicas === 0).length;
      if (parkedDone === PARKED && parkedMs === undefined) parkedMs = performance.now() - t0;
      if (done.length - parkedDone === LIVE && liveMs === undefined) liveMs = performance.now() - t0;
      return done.length === items.length ? performance.now() - t0 : undefined;
    },
    30 * 60_000,
  );
  const settled = memory(pid);
  log(`all ${items.length} settled after ${Math.round(settledMs / 1000)} s; RSS ${settled.rssMiB} MiB`);

  const loadSettled = load();
  await sleep(10_000);
  const cpu0 = cpuSeconds(pid);
  const probes0 = await metric(manager.port, 'etcd_operator_etcd_probes_total');
  const rest0 = performance.now();
  await sleep(REST_S * 1000);
  const restSeconds = (performance.now() - rest0) / 1000;
  const restCpu = (cpuSeconds(pid) - cpu0) / restSeconds;
  const probesPerMinute =
    ((await metric(manager.port, 'etcd_operator_etcd_probes_total')) - probes0) / (restSeconds / 60);
  const atRest = memory(pid);
  const loadAtRest = load();
  const mib = async (name: string): Promise<number> => Math.round((await metric(manager!.port, name)) / 1048576);
  const heap = {
    usedMiB: await mib('nodejs_heap_size_used_bytes'),
    committedMiB: await mib('nodejs_heap_size_total_bytes'),
    externalMiB: await mib('nodejs_external_memory_bytes'),
  };
  if (HEAP_DIR) {
    process.kill(pid, 'SIGUSR2');
    await sleep(30_000); // written synchronously by the manager; a few hundred MiB take a while
    log(`heap snapshot written to ${HEAP_DIR}`);
  }
  const rows = rowsOf(join(dir, 'manager', 'journal.db'), NS);
  const e2i = eventToIntent(rows);

  const result = {
    bench: 'scale',
    at: new Date().toISOString(),
    commit: commit(),
    cpus: cpus().length,
    live: LIVE,
    parked: PARKED,
    settledSeconds: Math.round(settledMs / 100) / 10,
    parkedSettledSeconds: Math.round((parkedMs ?? settledMs) / 100) / 10,
    liveSettledSeconds: Math.round((liveMs ?? settledMs) / 100) / 10,
    eventToIntentMs: { ...e2i, byEvent: byEvent(rows) },
    load: { atStart: loadAtStart, settled: loadSettled, atRest: loadAtRest },
    rssMiB: {
      peak: atRest.peakMiB,
      sampledPeakWhileSettling: peakDuring,
      settled: settled.rssMiB,
      atRest: atRest.rssMiB,
      heapAtRest: heap,
    },
    cpuAtRest: {
      seconds: REST_S,
      shareOfACore: Math.round(restCpu * 1000) / 1000,
      etcdProbesPerMinute: Math.round(probesPerMinute * 10) / 10,
    },
  };
  console.log(`
| ${LIVE} live + ${PARKED} parked EtcdClusters, one manager | |
| --- | ---: |
| applied -> all settled (the parked ones; the live ones) | ${result.settledSeconds} s (${result.parkedSettledSeconds} s; ${result.liveSettledSeconds} s) |
| event -> intent (journal) | p50 ${e2i.p50} ms, p99 ${e2i.p99} ms, max ${e2i.max} ms over ${e2i.steps} steps |
| RSS peak (VmHWM) / settled / at rest | ${atRest.peakMiB} / ${settled.rssMiB} / ${atRest.rssMiB} MiB |
| V8 heap at rest: used / committed; external | ${heap.usedMiB} / ${heap.committedMiB} MiB; ${heap.externalMiB} MiB |
| CPU at rest (${REST_S} s) | ${(restCpu * 100).toFixed(1)} % of a core, ${result.cpuAtRest.etcdProbesPerMinute} etcd probes/min |
| load average (1, 5, 15 min): start / settled / at rest | ${loadAtStart} / ${loadSettled} / ${loadAtRest} |`);
  console.log(JSON.stringify(result.eventToIntentMs.byEvent));
  const results = join(import.meta.dirname, 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, 'scale.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await manager?.stop();
  await local.stop();
  rmSync(dir, { recursive: true, force: true });
}
