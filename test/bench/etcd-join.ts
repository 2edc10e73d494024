/**
 * Time for the etcd handlers to grow a cluster by one member: addLearner, start the etcd
 * process with the initialCluster it returned, promoteLearner until in sync. Per etcd version,
 * ETCD_JOIN_ROUNDS rounds (default 3), each on a fresh seed: the first join, then a second,
 * which etcd holds back until the new voter has been connected for 5 s (its strict reconfig check).
 * Run: node test/bench/etcd-join.ts   → prints a table, writes test/bench/results/etcd-join.json
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { joinMember, LocalEtcd, type Joined } from '../effects/etcd/local-etcd.ts';

/** Figures for one etcd version. */
export interface VersionResult {
  readonly version: string;
  /** Seed process start until it answers a status call, ms. */
  readonly seedStartMs: readonly number[];
  readonly firstJoin: readonly Joined[];
  readonly secondJoin: readonly Joined[];
}

const ROUNDS = Number(process.env.ETCD_JOIN_ROUNDS ?? 3);
const VERSIONS = ['3.6.16', '3.5.35'];

async function round(version: string, i: number): Promise<{ seedMs: number; first: Joined; second: Joined }> {
  const name = `bench-${version.replaceAll('.', '')}-${i}`;
  const local = new LocalEtcd(name, version);
  try {
    const t0 = performance.now();
    await local.startSeed(`${name}-0`);
    const seedMs = Math.round(performance.now() - t0);
    const first = await joinMember(local, `${name}-1`);
    const second = await joinMember(local, `${name}-2`);
    return { seedMs, first, second };
  } finally {
    await local.stop();
  }
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const results: VersionResult[] = [];
  for (const version of VERSIONS) {
    const rounds = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(version, i));
    results.push({
      version,
      seedStartMs: rounds.map((r) => r.seedMs),
      firstJoin: rounds.map((r) => r.first),
      secondJoin: rounds.map((r) => r.second),
    });
  }
  const out = {
    bench: 'etcd-join',
    at: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    rounds: ROUNDS,
    results,
  };
  const dir = join(import.meta.dirname, 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'etcd-join.json'), `${JSON.stringify(out, null, 2)}\n`);
  console.log(
    'version  seed start  join 1: total (add/start/promote)  join 2: total (add incl. etcd wait)   [medians, ms]',
  );
  for (const r of results) {
    const m = (js: readonly Joined[], k: keyof Joined['ms']): number => median(js.map((j) => j.ms[k]));
    console.log(
      `${r.version.padEnd(8)} ${String(median(r.seedStartMs)).padStart(10)}  ${String(m(r.firstJoin, 'total')).padStart(6)} (${m(r.firstJoin, 'add')}/${m(r.firstJoin, 'start')}/${m(r.firstJoin, 'promote')})` +
        `${' '.repeat(20)}${String(m(r.secondJoin, 'total')).padStart(6)} (${m(r.secondJoin, 'add')})`,
    );
  }
  console.log(`wrote ${join('test', 'bench', 'results', 'etcd-join.json')}`);
}

await main();
