/**
 * The floor of a recovery from a lost quorum, done by hand with etcd's own tools and no operator:
 * a 3-member cluster (local processes) with QUORUM_KEYS keys loses two members for good (killed,
 * data removed); then, timed from there: the survivor stopped, started with --force-new-cluster
 * until it leads alone, stopped, started plainly, and two new members added as learners, started
 * and promoted (the same handlers the operator calls). QUORUM_ROUNDS rounds (default 3).
 * Run: node test/bench/quorum-recovery.ts   → prints a table, writes test/bench/results/quorum-recovery.json
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { probeCluster } from '../../effects/etcd/index.ts';
import { joinMember, LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { until } from '../../localcluster/until.ts';

const ROUNDS = Number(process.env.QUORUM_ROUNDS ?? 3);
const KEYS = Number(process.env.QUORUM_KEYS ?? 1000);

/** One round's times, ms. */
interface Round {
  readonly forced: number;
  readonly plain: number;
  readonly joined: number;
  readonly total: number;
  readonly keys: number;
}

async function round(i: number): Promise<Round> {
  const local = new LocalEtcd(`bench-quorum-${i}`);
  try {
    await local.startSeed('m0');
    await joinMember(local, 'm1');
    await joinMember(local, 'm2');
    const client = local.clients.member(local.ref, 'm0');
    for (let k = 0; k < KEYS; k++) await client.put(`key/${k}`).value(`value-${k}`);
    for (const m of ['m1', 'm2']) {
      await local.kill(m);
      rmSync(local.dataDir(m), { recursive: true, force: true });
    }
    const alone = (): Promise<true> =>
      until('m0 leads alone', async () => {
        const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(5_000));
        return seen.members.length === 1 && seen.leader !== null ? true : undefined;
      });
    const t0 = performance.now();
    await local.kill('m0', 'SIGTERM');
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing', undefined, ['--force-new-cluster']);
    await alone();
    const t1 = performance.now();
    await local.kill('m0', 'SIGTERM');
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing');
    await alone();
    const t2 = performance.now();
    await joinMember(local, 'm3');
    await joinMember(local, 'm4');
    const t3 = performance.now();
    const kv = await local.clients.member(local.ref, 'm0').getAll().prefix('key/').strings();
    const ms = (a: number, b: number): number => Math.round(b - a);
    return {
      forced: ms(t0, t1),
      plain: ms(t1, t2),
      joined: ms(t2, t3),
      total: ms(t0, t3),
      keys: Object.keys(kv).length,
    };
  } finally {
    await local.stop();
  }
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const rounds: Round[] = [];
for (let i = 0; i < ROUNDS; i++) rounds.push(await round(i));
const out = {
  bench: 'quorum-recovery',
  at: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  keys: KEYS,
  rounds,
};
const dir = join(import.meta.dirname, 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'quorum-recovery.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log('forced alone  plain again  2 joined  total   keys   [ms, each round]');
for (const r of rounds)
  console.log(
    `${String(r.forced).padStart(12)} ${String(r.plain).padStart(12)} ${String(r.joined).padStart(9)} ${String(r.total).padStart(6)} ${String(r.keys).padStart(6)}`,
  );
console.log(`median total ${median(rounds.map((r) => r.total))} ms; wrote test/bench/results/quorum-recovery.json`);
