/**
 * Snapshot streaming: the agent's peak memory and throughput while it streams a member's
 * snapshot to S3 (versitygw) and to a file, for a small store and a large one, so the memory a
 * large database adds is measured, not assumed; against the floor, `etcdctl snapshot save` of
 * the same member in the same run. Real etcd 3.6, real versitygw, the real agent process
 * (`etcd-operator agent snapshot`), each run under GNU time for its CPU time and peak RSS.
 * Each is run SNAPSHOT_BENCH_RUNS times (3), in turn, and its fastest run is kept (its peak RSS is
 * the highest of its runs): on a machine others share, the fastest is the one least slowed by them.
 * SNAPSHOT_BENCH_BASELINE=OTHER/manager/cli.ts runs another checkout's agent in turn with this
 * one's, under the same load, in rows of its own.
 * Run: node test/bench/snapshot.ts   (SNAPSHOT_BENCH_MIB=256 by default; part of `make bench`)
 *   → prints a table, writes test/bench/results/snapshot.json
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { LocalS3 } from '../effects/s3/local-s3.ts';

const MiB = 1024 * 1024;
const largeMiB = Number(process.env.SNAPSHOT_BENCH_MIB ?? 256);
const rounds = Number(process.env.SNAPSHOT_BENCH_RUNS ?? 3);
const cli = join(import.meta.dirname, '..', '..', 'manager', 'cli.ts');
/** Another checkout's `manager/cli.ts` (an earlier commit's), whose agent runs in turn with this one's. */
const baseline = process.env.SNAPSHOT_BENCH_BASELINE;
const agents = [{ cli, as: '' }, ...(baseline ? [{ cli: baseline, as: ' (baseline)' }] : [])];
const floorName = 'etcdctl snapshot save (floor)';

/** One agent run's figures. */
interface Run {
  readonly store: string;
  /** Where to, and for SNAPSHOT_BENCH_BASELINE's agent, ` (baseline)` after it. */
  readonly to: string;
  readonly bytes: number;
  readonly seconds: number;
  readonly mibPerSecond: number;
  /** User and system CPU time of the process. */
  readonly cpuSeconds: number;
  readonly peakRssMiB: number;
}

/**
 * Runs a command under GNU time; resolves with its stdout, wall time, CPU time (user and system:
 * what the run costs whatever else the machine runs) and peak RSS.
 */
function measured(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ out: string; peakKB: number; ms: number; cpuSeconds: number }> {
  const usage = join(dir, 'usage');
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/usr/bin/time', ['-o', usage, '-f', '%U %S %M', command, ...args], {
      env: { ...process.env, ...env },
    });
    let [out, err] = ['', ''];
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`${command} exited ${code}: ${err}`));
      const [user, system, peakKB] = readFileSync(usage, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
      resolve({ out, peakKB: peakKB!, ms, cpuSeconds: user! + system! });
    });
  });
}

/** Runs the agent; resolves with its report, peak and time. */
async function agent(cli: string, args: string[], env: NodeJS.ProcessEnv) {
  const got = await measured(process.execPath, [cli, 'agent', 'snapshot', ...args], env);
  return { ...got, report: JSON.parse(got.out) as { size: number } };
}

/** A run's figures from its size and measurement. */
function runOf(
  store: string,
  to: Run['to'],
  bytes: number,
  got: { peakKB: number; ms: number; cpuSeconds: number },
): Run {
  const seconds = got.ms / 1000;
  return {
    store,
    to,
    bytes,
    seconds: Number(seconds.toFixed(2)),
    mibPerSecond: Number((bytes / MiB / seconds).toFixed(1)),
    cpuSeconds: Number(got.cpuSeconds.toFixed(2)),
    peakRssMiB: Number((got.peakKB / 1024).toFixed(1)),
  };
}

async function fill(local: LocalEtcd, mib: number): Promise<void> {
  const kv = local.clients.member(local.ref, 'm0');
  const value = Buffer.alloc(MiB - 1024, 'x');
  for (let i = 0; i < mib; i++) await kv.put(`blob-${i}`).value(value);
}

const dir = mkdtempSync(join(tmpdir(), 'snapshot-bench-'));
const s3 = await new LocalS3().start();
const runs: Run[] = [];
try {
  for (const [store, mib] of [
    ['1 key', 0],
    [`${largeMiB} MiB`, largeMiB],
  ] as const) {
    const local = new LocalEtcd(`bench-${mib}`);
    try {
      await local.startSeed('m0');
      await fill(local, mib);
      const endpoint = local.resolve(local.ref).clientURL('m0');
      const credentials = {
        AWS_ACCESS_KEY_ID: s3.endpoint.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.endpoint.secretAccessKey,
      };
      const targets = {
        s3: [
          '--s3-bucket',
          s3.bucket,
          '--s3-key',
          `bench-${mib}.db`,
          '--s3-endpoint',
          s3.endpoint.endpoint!,
          '--s3-force-path-style',
        ],
        file: ['--file', join(dir, `bench-${mib}.db`)],
      };
      const measuredRuns: Run[] = [];
      for (let round = 0; round < rounds; round++) {
        for (const to of ['s3', 'file'] as const)
          for (const a of agents) {
            const got = await agent(a.cli, ['--endpoint', endpoint, ...targets[to]], credentials);
            measuredRuns.push(runOf(store, `${to}${a.as}`, got.report.size, got));
            rmSync(join(dir, `bench-${mib}.db`), { force: true });
          }
        // The floor: etcd's own client saving the same member's snapshot to a file (no read-back).
        const file = join(dir, `floor-${mib}.db`);
        const floor = await measured(
          await binary('etcdctl', '3.6.16'),
          ['--endpoints', endpoint, 'snapshot', 'save', file],
          {},
        );
        measuredRuns.push(runOf(store, floorName, statSync(file).size, floor));
        rmSync(file, { force: true });
      }
      for (const to of new Set(measuredRuns.map((r) => r.to))) {
        const these = measuredRuns.filter((r) => r.to === to);
        const best = these.reduce((a, b) => (b.seconds < a.seconds ? b : a));
        runs.push({ ...best, peakRssMiB: Math.max(...these.map((r) => r.peakRssMiB)) });
      }
    } finally {
      await local.stop();
    }
  }
} finally {
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log(`fastest of ${rounds} runs each`);
console.log(
  '| store | to | snapshot size | time (agent: incl. read-back) | MiB/s | speed of the floor | CPU time | peak RSS |',
);
console.log('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of runs) {
  const floor = runs.find((f) => f.store === r.store && f.to === floorName)!;
  const share = r === floor ? '' : `${Math.round((floor.seconds / r.seconds) * 100)}%`;
  console.log(
    `| ${r.store} | ${r.to} | ${(r.bytes / MiB).toFixed(1)} MiB | ${r.seconds} s | ${r.mibPerSecond} | ${share} | ${r.cpuSeconds} s | ${r.peakRssMiB} MiB |`,
  );
}
const results = join(import.meta.dirname, 'results');
mkdirSync(results, { recursive: true });
writeFileSync(
  join(results, 'snapshot.json'),
  `${JSON.stringify({ at: new Date().toISOString(), largeMiB, rounds, runs }, null, 2)}\n`,
);
