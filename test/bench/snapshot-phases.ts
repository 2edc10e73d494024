/**
 * Where the snapshot agent's time goes, phase by phase, in one process (no Node start): etcd's
 * snapshot stream with grpc-js's default flow-control window and with the agent's, the hashing,
 * the S3 upload one part at a time and four in flight, the read-back as one GET and in ranges,
 * and the record (HashKV); beside `etcdctl snapshot save` of the same member. Real etcd 3.6.16
 * and versitygw on loopback; each phase run SNAPSHOT_BENCH_RUNS times (3), the fastest kept.
 * Run: node test/bench/snapshot-phases.ts   (SNAPSHOT_BENCH_MIB=256 by default) → prints a table
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { Digest } from '../../effects/digest.ts';
import { readSnapshot, snapshotGrpcOptions } from '../../effects/etcd/snapshot.ts';
import { readObject, uploadStream, verifyObject } from '../../effects/s3/index.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';
import { measureAt } from '../../manager/agent-verify.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { LocalS3 } from '../effects/s3/local-s3.ts';

const MiB = 1024 * 1024;
const mib = Number(process.env.SNAPSHOT_BENCH_MIB ?? 256);
const rounds = Number(process.env.SNAPSHOT_BENCH_RUNS ?? 3);

/** Runs `work` `rounds` times; prints its fastest time and the rate over `bytes`. */
async function phase(what: string, bytes: number, work: () => unknown): Promise<void> {
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await work();
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  const rate = bytes > 0 ? `${(bytes / MiB / best).toFixed(0)} MiB/s` : '';
  console.log(`| ${what} | ${best.toFixed(2)} s | ${rate} |`);
}

/** Reads a snapshot from `client` to its end, keeping its messages when given `held`. */
async function drain(client: Etcd3, held?: Buffer[]): Promise<void> {
  const call = (await client.maintenance.snapshot()) as unknown as AsyncIterable<{ blob: Buffer }>;
  for await (const r of call) held?.push(r.blob);
}

const dir = mkdtempSync(join(tmpdir(), 'snapshot-phases-'));
const local = new LocalEtcd('phases');
const s3 = await new LocalS3().start();
try {
  await local.startSeed('m0');
  const kv = local.clients.member(local.ref, 'm0');
  const value = Buffer.alloc(MiB - 1024, 'x');
  for (let i = 0; i < mib; i++) await kv.put(`blob-${i}`).value(value);
  const endpoint = local.resolve(local.ref).clientURL('m0');
  const plain = new Etcd3({ hosts: [endpoint] });
  const agent = new Etcd3({ hosts: [endpoint], grpcOptions: snapshotGrpcOptions });
  const held: Buffer[] = [];
  await drain(agent, held);
  const size = held.reduce((n, b) => n + b.length, 0);
  const at = { bucket: s3.bucket, key: 'phases.db' };
  const stored = await uploadStream(s3.client, at, held);
  const revision = Number((await agent.maintenance.status()).header.revision);

  console.log(`${(size / MiB).toFixed(1)} MiB snapshot in ${held.length} messages; fastest of ${rounds} runs each`);
  console.log('| phase | time | rate |\n| --- | ---: | ---: |');
  const etcdctl = await binary('etcdctl', '3.6.16');
  const floorFile = join(dir, 'floor.db');
  await phase('floor: `etcdctl snapshot save` (its own process, to a file)', size, () => {
    spawnSync(etcdctl, ['--endpoints', endpoint, 'snapshot', 'save', floorFile]);
    if (statSync(floorFile).size !== size) throw new Error('etcdctl saved another size');
  });
  await phase('etcd stream, grpc-js default window (64 KiB)', size, () => drain(plain));
  await phase('etcd stream, the agent window (8 MiB)', size, () => drain(agent));
  await phase("etcd stream, 8 MiB window, etcd's hash and the sha256 checked", size, async () => {
    for await (const _ of readSnapshot(agent, { bytes: 0 }));
  });
  await phase('one sha256 pass over the snapshot, in memory', size, () => {
    const digest = new Digest();
    for (const b of held) digest.add(b);
    return digest.result();
  });
  for (const partsInFlight of [1, 4])
    await phase(`S3 upload from memory, ${partsInFlight} part(s) of 8 MiB in flight`, size, () =>
      uploadStream(s3.client, at, held, { partsInFlight }),
    );
  // To a key of its own: each stream is a snapshot of its own, not byte for byte the one held.
  await phase('etcd -> S3, 4 parts in flight (the agent, no start, tidy nor record)', size, () =>
    uploadStream(s3.client, { ...at, key: 'streamed.db' }, readSnapshot(agent, { bytes: 0 })),
  );
  await phase('S3 read-back, one GET', size, () => readObject(s3.client, at));
  await phase('S3 read-back, 4 ranges of 8 MiB in flight', size, () => verifyObject(s3.client, at, stored));
  await phase("record: HashKV and the key count at the snapshot's revision", 0, () => measureAt(agent, revision));
  plain.close();
  agent.close();
} finally {
  await local.stop();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
