/**
 * Defragmentation through the operator against its floor, on the local cluster (needs root):
 * 3 members of etcd holding BENCH_DEFRAG_MIB (default 256) MiB of 1 MiB values, half of them then
 * deleted and compacted away, so each database file keeps its size with half its pages free.
 *   operator: spec.maintenance.defrag.threshold set -> the Defragmented condition; per member,
 *             the manager's own figure (the `member defragmented` line: ms and bytes freed);
 *   floor:    the same 3 members as host processes (LocalEtcd), each defragmented in turn through
 *             a client of its own, followers first, the leader in place (what
 *             `etcdctl defrag --cluster` does, without moving leadership).
 * Run: node test/bench/defrag.ts (part of `make bench`) → prints a table, writes
 *      test/bench/results/defrag.json
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { hexID } from '../../effects/etcd/ids.ts';
import { installCrds } from '../../localcluster/crds.ts';
import { startLocalCluster } from '../../localcluster/index.ts';
import { ClusterUnderTest } from '../e2e/etcd-cluster.ts';
import { startManager, type ManagerLine, type ManagerProcess } from '../../localcluster/manager-process.ts';
import { joinMember, LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { clientsOf, createNamespace, until } from '../effects/kubernetes/e2e-context.ts';

const MiB = 1024 * 1024;
const FILL_MIB = Number(process.env.BENCH_DEFRAG_MIB ?? 256);
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const seconds = (ms: number): number => Math.round(ms / 10) / 100;
const mib = (bytes: number): number => Math.round((bytes / MiB) * 10) / 10;

/** Writes FILL_MIB values of 1 MiB, deletes every other one and compacts the history away. */
async function fragment(etcd: Etcd3): Promise<void> {
  const value = Buffer.alloc(MiB - 1024, 'x');
  for (let i = 0; i < FILL_MIB; i++) await etcd.put(`blob-${i}`).value(value);
  for (let i = 0; i < FILL_MIB; i += 2) await etcd.delete().key(`blob-${i}`);
  const revision = (await etcd.maintenance.status()).header.revision;
  await etcd.kv.compact({ revision, physical: true });
}

/** One member's defragmentation. */
interface Pass {
  readonly member: string;
  readonly ms: number;
  readonly freedBytes: number;
}

/** The floor: each member defragmented in turn through its own client, followers first. */
async function floor(): Promise<{ totalMs: number; passes: Pass[]; dbBytes: number }> {
  const local = new LocalEtcd('defrag-floor', '3.6.16');
  try {
    await local.startSeed('d0');
    for (const m of ['d1', 'd2']) await joinMember(local, m);
    const client = (m: string): Etcd3 => local.clients.member(local.ref, m);
    await fragment(client('d0'));
    const names = ['d0', 'd1', 'd2'];
    const leaderID = hexID((await client('d0').maintenance.status()).leader);
    const isLeader = async (m: string): Promise<boolean> =>
      hexID((await client(m).maintenance.status()).header.member_id) === leaderID;
    const leaders = await Promise.all(names.map(isLeader));
    const order = [...names].sort((a, b) => Number(leaders[names.indexOf(a)]) - Number(leaders[names.indexOf(b)]));
    const dbBytes = Number((await client(order[0] ?? 'd0').maintenance.status()).dbSize);
    const passes: Pass[] = [];
    const t0 = performance.now();
    for (const m of order) {
      const before = Number((await client(m).maintenance.status()).dbSize);
      const t = performance.now();
      await client(m).maintenance.defragment();
      const ms = performance.now() - t;
      passes.push({ member: m, ms, freedBytes: before - Number((await client(m).maintenance.status()).dbSize) });
    }
    return { totalMs: performance.now() - t0, passes, dbBytes };
  } finally {
    await local.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-defrag-bench-'));
log(`local cluster in ${dir}`);
const cluster = await startLocalCluster({
  dir,
  node: true,
  log: (l) => appendFileSync(join(dir, 'cluster.log'), `${l}\n`),
});
let manager: ManagerProcess | undefined;
const ns = 'bench';
const lines: ManagerLine[] = [];
try {
  const floorRun = await floor();
  log(`floor: ${seconds(floorRun.totalMs)} s for 3 members of ${mib(floorRun.dbBytes)} MiB`);

  await installCrds(cluster.kubectl);
  manager = await startManager({
    kubeconfig: cluster.kubeconfigPath,
    dir: join(dir, 'manager'),
    onLine: (l) => {
      lines.push(l);
      appendFileSync(join(dir, 'manager.log'), `${JSON.stringify(l)}\n`);
    },
  });
  const kube = clientsOf(cluster.kubeconfigPath);
  await createNamespace(kube.core, ns);
  const demo = new ClusterUnderTest(kube, ns, 'demo');
  await demo.create({ replicas: 3, storage: { size: `${FILL_MIB * 4}Mi` } });
  await demo.settled(3);
  const etcd = await demo.client();
  await fragment(etcd);
  const dbBytes = Number((await etcd.maintenance.status()).dbSize);
  etcd.close();
  log(`demo holds ${mib(dbBytes)} MiB, half of it free pages`);

  const t0 = Date.now();
  await demo.patchSpec({ maintenance: { defrag: { threshold: { fragmentedBytes: '8Mi' } } } });
  await until('the Defragmented condition', async () => {
    const s = (await demo.get()).status;
    return s?.conditions?.some((c) => c.type === 'Defragmented' && c.status === 'True') ? true : undefined;
  });
  const totalMs = Date.now() - t0;
  const passes: Pass[] = lines
    .filter((l) => l.msg === 'member defragmented')
    .map((l) => ({ member: String(l.member), ms: Number(l.ms), freedBytes: Number(l.freed) }));
  log(`operator: ${seconds(totalMs)} s for 3 members`);

  const result = {
    at: new Date().toISOString(),
    fillMiB: FILL_MIB,
    operator: { dbMiB: mib(dbBytes), totalSeconds: seconds(totalMs), passes },
    floor: { dbMiB: mib(floorRun.dbBytes), totalSeconds: seconds(floorRun.totalMs), passes: floorRun.passes },
  };
  const perMember = (ps: readonly Pass[]): string =>
    ps.map((p) => `${seconds(p.ms)} s (${mib(p.freedBytes)} MiB)`).join(', ');
  console.log(`
| defrag, 3 members, ${FILL_MIB} MiB written, half deleted | operator | floor (one client per member) | ratio |
| --- | ---: | ---: | ---: |
| database before | ${result.operator.dbMiB} MiB | ${result.floor.dbMiB} MiB | |
| spec edit -> Defragmented / first call -> last return | ${result.operator.totalSeconds} s | ${result.floor.totalSeconds} s | ${(totalMs / floorRun.totalMs).toFixed(1)}x |
| per member (freed) | ${perMember(passes)} | ${perMember(floorRun.passes)} | |`);
  const results = join(import.meta.dirname, 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, 'defrag.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await manager?.stop();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
