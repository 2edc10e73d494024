/**
 * What verifying a snapshot costs (spec.verify): the whole round a verify Job's Pod runs, in one
 * process on this machine: the stored file's sha256, `etcdutl snapshot restore`, a throwaway etcd
 * started on the restored data, HashKV and the key count at the snapshot's revision, the etcd
 * stopped and its data removed. Against the floor: `etcdutl snapshot restore` of the same file
 * alone (what any restore pays). Real etcd 3.6; the snapshot taken by the real agent.
 * Run: node test/bench/verify.ts   (VERIFY_BENCH_MIB=256 by default)
 *   → prints each size, writes test/bench/results/verify.json
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { runAgentCommand } from '../../manager/agent.ts';
import { verifySnapshotFile, type SnapshotRecord } from '../../manager/agent-verify.ts';
import { freePort, LocalEtcd } from '../effects/etcd/local-etcd.ts';

const MiB = 1024 * 1024;
const largeMiB = Number(process.env.VERIFY_BENCH_MIB ?? 256);
const run = promisify(execFile);

/** One size's figures. */
interface Result {
  readonly mib: number;
  readonly bytes: number;
  readonly keys: number;
  readonly verifySeconds: number;
  readonly restoreFloorSeconds: number;
  readonly checked: string;
}

const dir = mkdtempSync(join(tmpdir(), 'verify-bench-'));
const tools = { etcd: await binary('etcd', '3.6.16'), etcdutl: await binary('etcdutl', '3.6.16') };
const results: Result[] = [];
try {
  for (const mib of [16, largeMiB]) {
    const local = new LocalEtcd(`verify-bench-${mib}`, '3.6.16', { flags: ['--quota-backend-bytes=4294967296'] });
    try {
      await local.startSeed('m0');
      const kv = local.clients.member(local.ref, 'm0');
      const value = Buffer.alloc(MiB - 1024, 'x');
      for (let i = 0; i < mib; i++) await kv.put(`blob-${i}`).value(value);
      for (let i = 0; i < 10_000; i += 500)
        await Promise.all(
          Array.from({ length: 500 }, (_, j) =>
            kv
              .put(`key-${i + j}`)
              .value(`value-${i + j}`)
              .exec(),
          ),
        );
      const file = join(dir, `${mib}.db`);
      let out = '';
      const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void process.stderr.write(s) };
      const endpoint = local.resolve(local.ref).clientURL('m0');
      if ((await runAgentCommand(['snapshot', '--endpoint', endpoint, '--file', file], io, { env: {} })) !== 0)
        throw new Error('the agent could not take the snapshot');
      const recorded = JSON.parse(out) as SnapshotRecord & { sha256: string; size: number };
      const t0 = performance.now();
      const ports = { client: await freePort(), peer: await freePort() };
      const verdict = await verifySnapshotFile(file, recorded, tools, ports, dir);
      const verifySeconds = (performance.now() - t0) / 1000;
      if (!verdict.verified) throw new Error(`not verified: ${verdict.differences.join('; ')}`);
      const floorDir = join(dir, `floor-${mib}`);
      const t1 = performance.now();
      await run(tools.etcdutl, ['snapshot', 'restore', file, `--data-dir=${floorDir}`]);
      const restoreFloorSeconds = (performance.now() - t1) / 1000;
      rmSync(floorDir, { recursive: true, force: true });
      rmSync(file, { force: true });
      const r = {
        mib,
        bytes: recorded.size,
        keys: recorded.keys,
        verifySeconds,
        restoreFloorSeconds,
        checked: verdict.checked,
      };
      results.push(r);
      console.log(
        `${String(mib).padStart(4)} MiB (${recorded.size} bytes, ${recorded.keys} keys): verify ${verifySeconds.toFixed(2)} s, etcdutl restore alone ${restoreFloorSeconds.toFixed(2)} s`,
      );
    } finally {
      await local.stop();
    }
  }
  const out = join(import.meta.dirname, 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'verify.json'), `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
