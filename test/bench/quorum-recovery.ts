/**
 * The floor of a recovery from a lost quorum, done by hand with etcd's own tools and no operator:
 * a 3-member cluster (local processes) with QUORUM_KEYS small keys and QUORUM_MIB MiB of 1 MiB
 * values loses two members for good (killed, data removed); then, timed from there, each path:
 *   survivor: the survivor stopped, started with --force-new-cluster until it leads alone,
 *             stopped, started plainly, and two new members added as learners, started and
 *             promoted (the same handlers the operator calls);
 *   snapshot: from a snapshot saved (etcdctl snapshot save, untimed) before the loss: every member
 *             stopped, `etcdutl snapshot restore` (revisions bumped, marked compacted) into a new
 *             member's data dir, it started alone, and two new members joined as above.
 * QUORUM_ROUNDS rounds of each (default 3).
 * Run: QUORUM_MIB=256 node test/bench/quorum-recovery.ts
 *      → prints a table, writes test/bench/results/quorum-recovery.json
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { probeCluster } from '../../effects/etcd/index.ts';
import { BUMP_REVISION } from '../../machines/policy.ts';
import { etcdBinary, joinMember, LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { until } from '../../localcluster/until.ts';

const run = promisify(execFile);
const ROUNDS = Number(process.env.QUORUM_ROUNDS ?? 3);
const KEYS = Number(process.env.QUORUM_KEYS ?? 1000);
const MIB = Number(process.env.QUORUM_MIB ?? 0);
const tools = dirname(etcdBinary());

/** One round's times, ms: to the one member leading alone, then with two more joined. */
interface Round {
  readonly path: 'survivor' | 'snapshot';
  /** survivor: the forced start; snapshot: the restore and the seed's start. */
  readonly alone: number;
  /** survivor: the plain start again; snapshot: 0. */
  readonly plain: number;
  readonly joined: number;
  readonly total: number;
  readonly keys: number;
  /** snapshot: the snapshot's size in bytes. */
  readonly snapshotBytes?: number;
}

const ms = (a: number, b: number): number => Math.round(b - a);

/** A 3-member cluster with the keys and values written; m1 and m2 lost for good, m0 left running. */
async function lose(local: LocalEtcd, snapshotTo?: string): Promise<void> {
  await local.startSeed('m0');
  await joinMember(local, 'm1');
  await joinMember(local, 'm2');
  const client = local.clients.member(local.ref, 'm0');
  for (let k = 0; k < KEYS; k++) await client.put(`key/${k}`).value(`value-${k}`);
  const blob = Buffer.alloc(1024 * 1024 - 1024, 'x');
  for (let k = 0; k < MIB; k++) await client.put(`blob/${k}`).value(blob);
  if (snapshotTo)
    await run(join(tools, 'etcdctl'), [
      '--endpoints',
      local.resolve(local.ref).clientURL('m0'),
      'snapshot',
      'save',
      snapshotTo,
    ]);
  for (const m of ['m1', 'm2']) {
    await local.kill(m);
    rmSync(local.dataDir(m), { recursive: true, force: true });
  }
}

/** Until `member` leads a cluster of one. */
const alone = (local: LocalEtcd, member: string): Promise<true> =>
  until(`${member} leads alone`, async () => {
    const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(5_000));
    return seen.members.length === 1 && seen.leader !== null && seen.members[0]?.name === member ? true : undefined;
  });

/** The keys read back through `member`. */
const keysOn = async (local: LocalEtcd, member: string): Promise<number> =>
  Object.keys(await local.clients.member(local.ref, member).getAll().prefix('key/').keys()).length;

async function survivorRound(i: number): Promise<Round> {
  const local = new LocalEtcd(`bench-quorum-${i}`);
  try {
    await lose(local);
    const t0 = performance.now();
    await local.kill('m0', 'SIGTERM');
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing', undefined, ['--force-new-cluster']);
    await alone(local, 'm0');
    const t1 = performance.now();
    await local.kill('m0', 'SIGTERM');
    await local.start('m0', `m0=${local.peerURL('m0')}`, 'existing');
    await alone(local, 'm0');
    const t2 = performance.now();
    await joinMember(local, 'm3');
    await joinMember(local, 'm4');
    const t3 = performance.now();
    return {
      path: 'survivor',
      alone: ms(t0, t1),
      plain: ms(t1, t2),
      joined: ms(t2, t3),
      total: ms(t0, t3),
      keys: await keysOn(local, 'm0'),
    };
  } finally {
    await local.stop();
  }
}

async function snapshotRound(i: number): Promise<Round> {
  const local = new LocalEtcd(`bench-quorum-snap-${i}`);
  const file = join(local.dir, 'snapshot.db');
  try {
    mkdirSync(local.dir, { recursive: true });
    await lose(local, file);
    const t0 = performance.now();
    await local.kill('m0', 'SIGTERM');
    const peer = await local.allocate('m3');
    const initial = `m3=${peer}`;
    await run(join(tools, 'etcdutl'), [
      ...['snapshot', 'restore', file, '--data-dir', local.dataDir('m3'), '--name', 'm3'],
      ...['--initial-cluster', initial, '--initial-advertise-peer-urls', peer],
      ...['--initial-cluster-token', local.ref.uid, '--bump-revision', String(BUMP_REVISION), '--mark-compacted'],
    ]);
    await local.start('m3', initial, 'new');
    await alone(local, 'm3');
    const t1 = performance.now();
    await joinMember(local, 'm4');
    await joinMember(local, 'm5');
    const t2 = performance.now();
    return {
      path: 'snapshot',
      alone: ms(t0, t1),
      plain: 0,
      joined: ms(t1, t2),
      total: ms(t0, t2),
      keys: await keysOn(local, 'm3'),
      snapshotBytes: statSync(file).size,
    };
  } finally {
    await local.stop();
  }
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const rounds: Round[] = [];
for (let i = 0; i < ROUNDS; i++) rounds.push(await survivorRound(i));
for (let i = 0; i < ROUNDS; i++) rounds.push(await snapshotRound(i));
const out = {
  bench: 'quorum-recovery',
  at: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  keys: KEYS,
  mib: MIB,
  rounds,
};
const dir = join(import.meta.dirname, 'results');
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'quorum-recovery.json'), `${JSON.stringify(out, null, 2)}\n`);
console.log(`${KEYS} keys and ${MIB} MiB of values; ms, each round`);
console.log('path      alone (forced or restored)  plain again  2 joined   total   keys');
for (const r of rounds)
  console.log(
    `${r.path.padEnd(9)} ${String(r.alone).padStart(26)} ${String(r.plain).padStart(12)} ${String(r.joined).padStart(9)} ${String(r.total).padStart(7)} ${String(r.keys).padStart(6)}`,
  );
for (const p of ['survivor', 'snapshot'] as const)
  console.log(`${p}: median total ${median(rounds.filter((r) => r.path === p).map((r) => r.total))} ms`);
console.log('wrote test/bench/results/quorum-recovery.json');
