import { closeSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCommand } from '../../manager/agent.ts';
import {
  compare,
  parseVerifyArgs,
  verifySnapshotFile,
  type EtcdTools,
  type SnapshotRecord,
} from '../../manager/agent-verify.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { freePort, LocalEtcd } from '../effects/etcd/local-etcd.ts';

type Recorded = SnapshotRecord & { sha256: string; size: number };

describe(
  'agent verify: a stored snapshot restored into a throwaway etcd, against a real etcd',
  { timeout: 180_000 },
  () => {
    const local = new LocalEtcd('agent-verify');
    const dir = mkdtempSync(join(os.tmpdir(), 'agent-verify-'));
    let tools: EtcdTools;
    let recorded: Recorded;
    const ports = async () => ({ client: await freePort(), peer: await freePort() });

    /** Takes a snapshot to a file with the agent, as a snapshot Job does; returns its report. */
    async function take(file: string): Promise<Recorded> {
      let out = '';
      let err = '';
      const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void (err += s) };
      const endpoint = local.resolve(local.ref).clientURL('m0');
      const code = await runAgentCommand(['snapshot', '--endpoint', endpoint, '--file', file], io, {
        terminationLog: join(dir, 'termination-log'),
        env: {},
      });
      expect({ code, err }).toEqual({ code: 0, err: '' });
      return JSON.parse(out) as Recorded;
    }

    beforeAll(async () => {
      await local.startSeed('m0');
      tools = { etcd: await binary('etcd', '3.6.16'), etcdutl: await binary('etcdutl', '3.6.16') };
      const kv = local.clients.member(local.ref, 'm0');
      for (let i = 0; i < 100; i++)
        await kv
          .put(`key-${i % 80}`)
          .value(`value-${i}`)
          .exec();
      await kv.delete().key('key-0').exec();
      // Compacted before the snapshot: the restored etcd must report the same compaction for its hash to compare.
      await local.clients.member(local.ref, 'm0').kv.compact({ revision: 60, physical: true });
      recorded = await take(join(dir, 'good.db'));
    }, 120_000);
    afterAll(async () => {
      await local.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the snapshot Job records HashKV, the compaction and the key count at the revision it holds', () => {
      expect(recorded).toMatchObject({ keys: 79, compactRevision: 60 });
      expect(recorded.hashKV).toBeGreaterThan(0);
      expect(recorded.revision).toBeGreaterThan(100);
    });

    it('a snapshot as it was stored is Verified: hash, revision and keys match, and the etcd is gone after', async () => {
      const started = Date.now();
      const work = mkdtempSync(join(dir, 'work-'));
      const at = await ports();
      const verdict = await verifySnapshotFile(join(dir, 'good.db'), recorded, tools, at, work);
      console.log(`verified ${recorded.size} bytes in ${Date.now() - started} ms: ${verdict.checked}`);
      expect(verdict).toEqual({
        verified: true,
        checked: `revision ${recorded.revision} (head ${recorded.revision}), hashKV ${recorded.hashKV}, 79 keys`,
        differences: [],
      });
      expect(readdirSync(work)).toEqual([]);
      expect(await bindable(at.client)).toBe(true);
    });

    it('a file altered after it was recorded is not Verified: its sha256 differs', async () => {
      const file = join(dir, 'altered.db');
      await take(file);
      flipByte(file, 4096 + 17);
      const verdict = await verifySnapshotFile(file, recorded, tools, await ports());
      expect(verdict.verified).toBe(false);
      expect(verdict.differences).toEqual([
        expect.stringMatching(/^sha256 is [0-9a-f]{64}, not the recorded .*changed after it was stored$/),
      ]);
    });

    it("an altered file whose new sha256 was recorded is still refused: etcd's own hash at its end", async () => {
      const file = join(dir, 'rehashed.db');
      const mine = await take(file);
      flipByte(file, 4096 + 17);
      const { digestOf } = await import('../../effects/digest.ts');
      const { createReadStream } = await import('node:fs');
      const sha256 = (await digestOf(createReadStream(file))).sha256;
      const verdict = await verifySnapshotFile(file, { ...mine, sha256 }, tools, await ports());
      expect(verdict.verified).toBe(false);
      expect(verdict.differences).toEqual([expect.stringMatching(/^etcdutl refused it: .*/)]);
    });

    it('verify-snapshot, as a verify Job runs it, reports the check of the etcd beside it as its termination message', async () => {
      // The member the snapshot was taken from is checked here: unchanged since, it holds what was recorded.
      let out = '';
      const io = { stdout: (s: string) => void (out += s), stderr: () => undefined };
      const endpoint = local.resolve(local.ref).clientURL('m0');
      const { revision, hashKV, compactRevision, keys } = recorded;
      const args = [`--endpoint=${endpoint}`, `--revision=${revision}`, `--hash-kv=${hashKV}`];
      const argv = ['verify-snapshot', ...args, `--compact-revision=${compactRevision}`, `--keys=${keys}`];
      const code = await runAgentCommand(argv, io, { terminationLog: join(dir, 'termination-log'), env: {} });
      expect(code).toBe(0);
      expect(JSON.parse(out)).toEqual({
        verified: true,
        checked: `revision ${revision} (head ${revision}), hashKV ${hashKV}, 79 keys`,
        differences: [],
      });
    });

    it('a restore whose keys or hash differ from the record says which, and by how much', async () => {
      const wrong = { ...recorded, keys: recorded.keys + 1, hashKV: recorded.hashKV + 1 };
      const verdict = await verifySnapshotFile(join(dir, 'good.db'), wrong, tools, await ports());
      expect(verdict.verified).toBe(false);
      expect(verdict.differences).toEqual([
        `hashKV at revision ${recorded.revision} is ${recorded.hashKV}, not the recorded ${recorded.hashKV + 1}`,
        `79 keys at revision ${recorded.revision}, not the recorded 80`,
      ]);
    });
  },
);

describe('agent verify: the comparison and the arguments', () => {
  const record: SnapshotRecord = { revision: 10, hashKV: 7, compactRevision: 1, keys: 3 };
  it('a restored etcd behind the recorded revision differs', () => {
    expect(compare(record, record, 9).differences).toEqual([
      'the restored etcd is at revision 9, before the recorded 10',
    ]);
  });
  it('hashes from another compaction are not compared, and say so', () => {
    expect(compare(record, { ...record, compactRevision: 5, hashKV: 8 }, 10).differences).toEqual([
      'compacted at revision 5, not the recorded 1 (hashes are not comparable)',
    ]);
  });
  it('refuses an endpoint that is not on loopback, and a record with a missing field', () => {
    expect(() =>
      parseVerifyArgs([
        '--endpoint=http://10.0.0.1:2379',
        '--revision=1',
        '--hash-kv=1',
        '--compact-revision=0',
        '--keys=1',
      ]),
    ).toThrow(/127\.0\.0\.1/);
    expect(() =>
      parseVerifyArgs(['--endpoint=http://127.0.0.1:2379', '--revision=1', '--compact-revision=0', '--keys=1']),
    ).toThrow(/--hash-kv must be a whole number/);
    expect(
      parseVerifyArgs([
        '--endpoint=http://127.0.0.1:2379',
        '--revision=4',
        '--hash-kv=9',
        '--compact-revision=0',
        '--keys=2',
      ]).record,
    ).toEqual({ revision: 4, hashKV: 9, compactRevision: 0, keys: 2 });
  });
});

/** Flips one byte of a file in place. */
function flipByte(file: string, at: number): void {
  const fd = openSync(file, 'r+');
  try {
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, at);
    b[0] = b[0]! ^ 0xff;
    writeSync(fd, b, 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

/** Whether nothing listens on 127.0.0.1:port (the throwaway etcd was stopped). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
