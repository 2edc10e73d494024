/**
 * Snapshot streaming: the agent's peak memory and throughput while it streams a member's
 * snapshot to S3 (versitygw) and to a file, for a small store and a large one, so the memory a
 * large database adds is measured, not assumed; against the floor, `etcdctl snapshot save` of
 * the same member in the same run. Real etcd 3.6, real versitygw, the real agent process
 * (`etcd-operator agent snapshot`), RSS read from /proc every 20 ms.
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
const cli = join(import.meta.dirname, '..', '..', 'manager', 'cli.ts');

/** One agent run's figures. */
interface Run {
  readonly store: string;
  readonly to: 's3' | 'file' | 'etcdctl snapshot save (floor)';
  readonly bytes: number;
  readonly seconds: number;
  readonly mibPerSecond: number;
  readonly peakRssMiB: number;
}

/** kB of a /proc/PID/status field. */
function statusKB(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return line ? Number(line[1]) : 0;
}

/** Runs a command, sampling its RSS; resolves with its stdout, peak and time. */
function measured(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ out: string; peakKB: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, { env: { ...process.env, ...env } });
    let [out, err, peakKB] = ['', '', 0];
    const sample = setInterval(() => {
      try {
        peakKB = Math.max(peakKB, statusKB(child.pid!, 'VmHWM'));
      } catch {
        // exited between samples
      }
    }, 20);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      clearInterval(sample);
      if (code !== 0) return reject(new Error(`${command} exited ${code}: ${err}`));
      resolve({ out, peakKB, ms: performance.now() - t0 });
    });
  });
}

/** Runs the agent; resolves with its report, peak and time. */
async function agent(args: string[], env: NodeJS.ProcessEnv) {
  const got = await measured(process.execPath, [cli, 'agent', 'snapshot', ...args], env);
  return { ...got, report: JSON.parse(got.out) as { size: number } };
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
      for (const to of ['s3', 'file'] as const) {
        const got = await agent(['--endpoint', endpoint, ...targets[to]], credentials);
        const seconds = got.ms / 1000;
        runs.push({
          store,
          to,
          bytes: got.report.size,
          seconds: Number(seconds.toFixed(2)),
          mibPerSecond: Number((got.report.size / MiB / seconds).toFixed(1)),
          peakRssMiB: Number((got.peakKB / 1024).toFixed(1)),
        });
        rmSync(join(dir, `bench-${mib}.db`), { force: true });
      }
      // The floor: etcd's own client saving the same member's snapshot to a file (no read-back).
      const file = join(dir, `floor-${mib}.db`);
      const floor = await measured(
        await binary('etcdctl', '3.6.16'),
        ['--endpoints', endpoint, 'snapshot', 'save', file],
        {},
      );
      const bytes = statSync(file).size;
      runs.push({
        store,
        to: 'etcdctl snapshot save (floor)',
        bytes,
        seconds: Number((floor.ms / 1000).toFixed(2)),
        mibPerSecond: Number((bytes / MiB / (floor.ms / 1000)).toFixed(1)),
        peakRssMiB: Number((floor.peakKB / 1024).toFixed(1)),
      });
      rmSync(file, { force: true });
    } finally {
      await local.stop();
    }
  }
} finally {
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}

console.log('| store | to | snapshot size | time (agent: incl. read-back) | MiB/s | peak RSS |');
console.log('| --- | --- | ---: | ---: | ---: | ---: |');
for (const r of runs) {
  console.log(
    `| ${r.store} | ${r.to} | ${(r.bytes / MiB).toFixed(1)} MiB | ${r.seconds} s | ${r.mibPerSecond} | ${r.peakRssMiB} MiB |`,
  );
}
const results = join(import.meta.dirname, 'results');
mkdirSync(results, { recursive: true });
writeFileSync(
  join(results, 'snapshot.json'),
  `${JSON.stringify({ at: new Date().toISOString(), largeMiB, runs }, null, 2)}\n`,
);
