import { createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot, SnapshotIntegrityError, type SnapshotInfo } from '../../../effects/etcd/snapshot.ts';
import { snapshotStorageVersion } from '../../../effects/etcd/storage-version.ts';
import { readObject, uploadStream } from '../../../effects/s3/index.ts';
import { binary, run } from '../../../localcluster/controlplane/tools.ts';
import { LocalS3 } from '../s3/local-s3.ts';
import { LocalEtcd } from './local-etcd.ts';

/** etcdutl's view of a snapshot file. */
async function status(
  version: string,
  file: string,
): Promise<{ revision: number; totalKey: number; version?: string }> {
  const out = await run(await binary('etcdutl', version), ['snapshot', 'status', file, '-w', 'json']);
  return JSON.parse(out) as { revision: number; totalKey: number; version?: string };
}

for (const version of ['3.7.3', '3.6.16', '3.5.35']) {
  describe(`snapshots of a real etcd ${version}`, { timeout: 120_000 }, () => {
    const local = new LocalEtcd(`snap-${version.replaceAll('.', '')}`, version);
    const s3 = new LocalS3();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'snapshot-test-'));
    let lastRevision = 0;
    beforeAll(async () => {
      await Promise.all([local.startSeed('m0'), s3.start()]);
      const kv = local.clients.member(local.ref, 'm0');
      for (let i = 0; i < 200; i++)
        lastRevision = Number((await kv.put(`key-${i}`).value(`value-${i}`).exec()).header.revision);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([local.stop(), s3.stop()]);
      rmSync(dir, { recursive: true, force: true });
    });

    it('streams through with its revision; etcdutl reads the file it makes', async () => {
      const info: SnapshotInfo = { bytes: 0 };
      const file = path.join(dir, 'plain.db');
      await pipeline(readSnapshot(local.clients.member(local.ref, 'm0'), info), createWriteStream(file));
      expect(info.revision).toBe(lastRevision);
      expect(info.etcdVersion).toBe(version);
      const seen = await status(version, file);
      expect(seen).toMatchObject({ revision: lastRevision });
      expect(seen.totalKey).toBeGreaterThanOrEqual(200);
      // The storage version read from the file's pages is the one etcdutl reads (3.5's reads none).
      const bytes = readFileSync(file);
      const read = (offset: number, length: number) => Promise.resolve(bytes.subarray(offset, offset + length));
      expect(await snapshotStorageVersion(read)).toBe(seen.version || undefined);
    });

    it('goes to S3 and comes back as a data dir etcd starts from with every key', async () => {
      const info: SnapshotInfo = { bytes: 0 };
      const at = { bucket: s3.bucket, key: `demo/${version}.db` };
      const stored = await uploadStream(s3.client, at, readSnapshot(local.clients.member(local.ref, 'm0'), info));
      expect(stored.size).toBe(info.bytes);
      expect(await readObject(s3.client, at)).toEqual(stored);

      const file = path.join(dir, `restored-${version}.db`);
      const { Body } = await s3.client.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.key }));
      await pipeline(Body as NodeJS.ReadableStream, createWriteStream(file));
      // Restored as member r0 of a new one-member cluster, in the dir LocalEtcd starts r0 from.
      const peer = await local.allocate('r0');
      const restore = ['snapshot', 'restore', file, '--data-dir', path.join(local.dir, 'r0'), '--name', 'r0'];
      const peers = ['--initial-cluster', `r0=${peer}`, '--initial-advertise-peer-urls', peer];
      // etcdutl checks etcd's trailing sha256 here (no --skip-hash-check).
      await run(await binary('etcdutl', version), [...restore, ...peers]);
      await local.start('r0', `r0=${peer}`, 'new');
      const restored = local.clients.member(local.ref, 'r0');
      expect(await restored.get('key-199').string()).toBe('value-199');
      expect(await restored.getAll().prefix('key-').count()).toBe(200);
    });
  });
}

describe('snapshot stream checks', () => {
  /** A stand-in for etcd3's stream: the blobs given, then its end. */
  const fakeClient = (blobs: Buffer[]) =>
    ({
      maintenance: {
        status: () => Promise.resolve({ header: { revision: '7' }, version: '3.6.16' }),
        snapshot: () =>
          Promise.resolve(
            Object.assign(
              (function* () {
                for (const blob of blobs) yield { blob };
              })(),
              { cancel() {} },
            ),
          ),
      },
    }) as unknown as Etcd3;
  const drain = async (blobs: Buffer[]) => {
    const info: SnapshotInfo = { bytes: 0 };
    const chunks = readSnapshot(fakeClient(blobs), info);
    for await (const _ of chunks) void _;
    return { ...info, stored: chunks.stored() };
  };
  const db = Buffer.from('a database of some bytes'.repeat(100));
  const sum = createHash('sha256').update(db).digest();

  it('passes bytes whose last 32 are the sha256 of the rest, however they are split, and hashes them whole', async () => {
    const whole = Buffer.concat([db, sum]);
    const stored = { size: whole.length, sha256: createHash('sha256').update(whole).digest('hex') };
    for (const cuts of [
      [10, whole.length - 5],
      [whole.length - 40, whole.length - 20, whole.length - 1],
      [1, 2, 3],
    ]) {
      const blobs = [0, ...cuts].map((from, i) => whole.subarray(from, [...cuts, whole.length][i]));
      expect(await drain(blobs)).toEqual({ bytes: whole.length, revision: 7, etcdVersion: '3.6.16', stored });
    }
  });

  it('refuses a stream whose hash does not match, or that ends before its hash', async () => {
    const bad = Buffer.concat([db, sum]);
    bad[3] = bad[3]! ^ 1;
    await expect(drain([bad])).rejects.toThrow(SnapshotIntegrityError);
    await expect(drain([Buffer.from('short')])).rejects.toThrow(/ended after 5 bytes/);
  });
});
