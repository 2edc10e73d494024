/**
 * A rolling upgrade through the operator against its floor, on the local cluster (needs root):
 * 3 members of etcd 3.5.35 holding BENCH_UPGRADE_MIB (default 64) MiB, moved to 3.6.16.
 *   operator: spec.version patched -> every member answering on 3.6.16 and Steady; per member,
 *             from the manager's log (the time its EtcdMember was set) to the next one's;
 *   floor:    the same 3 members as host processes (LocalEtcd), each stopped with SIGTERM and
 *             started on the 3.6.16 binary over its data directory by hand, followers first, the
 *             next one only once the last answers on 3.6.16 within 100 entries of the leader.
 * Run: node test/bench/upgrade.ts (part of `make bench`) → prints a table, writes
 *      test/bench/results/upgrade.json
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
import { etcdBinary, joinMember, LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { clientsOf, createNamespace, until } from '../effects/kubernetes/e2e-context.ts';

const MiB = 1024 * 1024;
const FILL_MIB = Number(process.env.BENCH_UPGRADE_MIB ?? 64);
const FROM = '3.5.35';
const TO = '3.6.16';
const log = (line: string): void => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const seconds = (ms: number): number => Math.round(ms / 10) / 100;

/** Writes FILL_MIB MiB of 1 MiB values. */
async function fill(etcd: Etcd3): Promise<void> {
  const value = Buffer.alloc(MiB - 1024, 'x');
  for (let i = 0; i < FILL_MIB; i++) await etcd.put(`blob-${i}`).value(value);
}

/** The floor: each member stopped and started on the new binary by hand, followers first. */
async function floor(): Promise<{ totalMs: number; perMemberMs: number[] }> {
  const local = new LocalEtcd('upgrade-floor', FROM);
  try {
    await local.startSeed('u0');
    for (const m of ['u1', 'u2']) await joinMember(local, m);
    await fill(local.clients.member(local.ref, 'u0'));
    const names = ['u0', 'u1', 'u2'];
    const status = (m: string) => local.clients.member(local.ref, m).maintenance.status();
    const leaderID = hexID((await status('u0')).leader);
    const ids = new Map<string, string>();
    for (const m of names) ids.set(m, hexID((await status(m)).header.member_id));
    const order = [...names].sort((a, b) => Number(ids.get(a) === leaderID) - Number(ids.get(b) === leaderID));
    const next = etcdBinary(TO);
    const perMemberMs: number[] = [];
    const t0 = performance.now();
    for (const m of order) {
      const t = performance.now();
      await local.kill(m, 'SIGTERM');
      await local.start(m, `${m}=${local.peerURL(m)}`, 'existing', next);
      await until(`${m} on ${TO} and in sync`, async () => {
        const own = await status(m).catch(() => undefined);
        if (own?.version !== TO) return undefined;
        const leader =
          own.leader === own.header.member_id
            ? own
            : await status(names.find((n) => ids.get(n) === hexID(own.leader)) ?? m);
        return Number(own.raftAppliedIndex) + 100 >= Number(leader.raftIndex) ? true : undefined;
      });
      perMemberMs.push(performance.now() - t);
    }
    return { totalMs: performance.now() - t0, perMemberMs };
  } finally {
    await local.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-upgrade-bench-'));
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
  log(`floor: ${seconds(floorRun.totalMs)} s for 3 members`);

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
  await demo.create({ replicas: 3, version: FROM, storage: { size: `${FILL_MIB * 4}Mi` } });
  await demo.settled(3);
  const etcd = await demo.client();
  await fill(etcd);
  etcd.close();
  log(`demo filled with ${FILL_MIB} MiB`);

  const t0 = Date.now();
  await demo.patchSpec({ version: TO });
  await until('every member on the new version', async () => {
    const s = (await demo.get()).status;
    return s?.observed?.step === 'Steady' && s.members?.length === 3 && s.members.every((m) => m.version === TO)
      ? true
      : undefined;
  });
  const totalMs = Date.now() - t0;
  const set = lines.filter((l) => l.msg === 'member set to a new etcd version').map((l) => Number(l.time));
  const perMemberMs = set.map((t, i) => (set[i + 1] ?? t0 + totalMs) - t);
  log(`operator: ${seconds(totalMs)} s for 3 members`);

  const result = {
    at: new Date().toISOString(),
    fillMiB: FILL_MIB,
    from: FROM,
    to: TO,
    operator: { totalSeconds: seconds(totalMs), perMemberSeconds: perMemberMs.map(seconds) },
    floor: { totalSeconds: seconds(floorRun.totalMs), perMemberSeconds: floorRun.perMemberMs.map(seconds) },
  };
  console.log(`
| ${FROM} -> ${TO}, 3 members, ${FILL_MIB} MiB | operator | floor (SIGTERM, start on ${TO}) | ratio |
| --- | ---: | ---: | ---: |
| whole roll | ${result.operator.totalSeconds} s | ${result.floor.totalSeconds} s | ${(totalMs / floorRun.totalMs).toFixed(1)}x |
| per member | ${result.operator.perMemberSeconds.join(', ')} s | ${result.floor.perMemberSeconds.join(', ')} s | |`);
  const results = join(import.meta.dirname, 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, 'upgrade.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await manager?.stop();
  await cluster.stop();
  rmSync(dir, { recursive: true, force: true });
}
