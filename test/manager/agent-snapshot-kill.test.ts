/**
 * The snapshot agent killed with SIGKILL at points of its S3 upload, as a node's loss or the OOM
 * killer would, then run again as the Job's next attempt is: the store ends with the right
 * object and no upload left unfinished. The agent is the real command line, against a real etcd
 * and a real S3-compatible server (versitygw); the kills are its failpoints (manager/failpoints.ts).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CreateMultipartUploadCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defaultPartSize,
  defaultPartsInFlight,
  openUploads,
  readObject,
  type OpenUpload,
} from '../../effects/s3/index.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { LocalS3 } from '../effects/s3/local-s3.ts';

const cli = join(import.meta.dirname, '../../manager/cli.ts');
const MiB = 1024 * 1024;

/** How a run of the agent ended. */
interface Ended {
  readonly code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
}

describe('agent snapshot killed mid-upload, against real etcd and versitygw', { timeout: 300_000 }, () => {
  const local = new LocalEtcd('agent-kill');
  const s3 = new LocalS3();
  let endpoint = '';
  beforeAll(async () => {
    await Promise.all([local.startSeed('m0'), s3.start()]);
    endpoint = local.resolve(local.ref).clientURL('m0');
    // 40 MiB of values: a snapshot of about 49 MiB, 7 parts of 8 MiB (a first, a third and a last).
    const kv = local.clients.member(local.ref, 'm0');
    for (let i = 0; i < 40; i++) await kv.put(`big/${i}`).value(randomBytes(MiB)).exec();
  }, 300_000);
  afterAll(() => Promise.all([local.stop(), s3.stop()]));

  const env = () => ({
    ...process.env,
    AWS_ACCESS_KEY_ID: s3.endpoint.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.endpoint.secretAccessKey,
  });
  const where = (key: string) => [
    ...['--s3-bucket', s3.bucket, '--s3-key', key],
    ...['--s3-endpoint', s3.endpoint.endpoint!, '--s3-force-path-style'],
  ];

  /** Runs `etcd-operator agent ARGS` as the Job's container does; `failpoint` arms a SIGKILL (or `signal`). */
  function agent(args: string[], failpoint?: string, signal?: 'SIGTERM'): Promise<Ended> {
    const armed = {
      ...(failpoint ? { ETCD_OPERATOR_FAILPOINT: failpoint } : {}),
      ...(signal ? { ETCD_OPERATOR_FAILPOINT_SIGNAL: signal } : {}),
    };
    return new Promise((resolve) => {
      execFile(process.execPath, [cli, 'agent', ...args], { env: { ...env(), ...armed } }, (err, stdout, stderr) => {
        const e = err as { code?: number; signal?: string } | null;
        resolve({ code: e ? (e.code ?? null) : 0, signal: e?.signal ?? null, stdout, stderr });
      });
    });
  }
  const snapshot = (key: string, failpoint?: string, extra: string[] = []) =>
    agent(['snapshot', '--endpoint', endpoint, ...where(key), ...extra], failpoint);

  /** The uploads under `prefix` begun and never completed nor aborted, each with its parts. */
  async function unfinished(prefix: string): Promise<(OpenUpload & { parts: number })[]> {
    const found: (OpenUpload & { parts: number })[] = [];
    for await (const u of openUploads(s3.client, s3.bucket, prefix)) {
      const listed = await s3.client.send(
        new ListPartsCommand({ Bucket: s3.bucket, Key: u.key, UploadId: u.uploadId }),
      );
      found.push({ ...u, parts: listed.Parts?.length ?? 0 });
    }
    return found;
  }

  /**
   * The parts an upload killed after its `stored`th part can have left: those, and any of the
   * others in flight that the store finished taking before the kill cut their connections.
   */
  const partsLeftAfter = (stored: number) =>
    expect.toSatisfy(
      (n: number) => n >= stored && n <= Math.min(lastPart, stored + defaultPartsInFlight - 1),
    ) as unknown;

  /** Kills a run at `failpoint`, checks what it left, runs it again; returns the second run's report. */
  async function killThenRetry(key: string, failpoint: string, partsStored: number) {
    const killed = await snapshot(key, failpoint);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(await unfinished(key)).toMatchObject([{ key, parts: partsLeftAfter(partsStored) }]);
    const retry = await snapshot(key);
    expect(retry.stderr).toBe('');
    expect(retry.code).toBe(0);
    return JSON.parse(retry.stdout) as { size: number; sha256: string; abortedUploads: number };
  }

  /** A clean run before any kill: its report, and the number of parts the snapshot takes. */
  let clean: Ended;
  let lastPart = 0;
  beforeAll(async () => {
    clean = await snapshot('kill/clean-00000000.db');
    const size = (JSON.parse(clean.stdout || '{}') as { size?: number }).size ?? 0;
    lastPart = Math.ceil(size / defaultPartSize);
  }, 120_000);

  it('a clean run stores the snapshot in several parts and leaves no upload', async () => {
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ abortedUploads: 0 });
    expect(lastPart).toBeGreaterThanOrEqual(5);
    expect(await unfinished('kill/')).toEqual([]);
  });

  // With parts in flight, a kill after the first or third part stored cuts the others going.
  it.each([
    ['as the upload was begun', 'upload-created', 0],
    ['after its first part, others in flight', 'upload-part:1', 1],
    ['after its third part, others in flight', 'upload-part:3', 3],
  ])('killed %s, the next attempt stores the whole snapshot and aborts the upload left', async (_, point, parts) => {
    const key = `kill/at-${point.replace(':', '-')}-00000000.db`;
    const report = await killThenRetry(key, point, parts);
    expect(await unfinished(key)).toEqual([]);
    expect(await readObject(s3.client, { bucket: s3.bucket, key })).toEqual({
      size: report.size,
      sha256: report.sha256,
    });
    expect(report.abortedUploads).toBe(1);
  });

  it('killed after its last part, before completing, the next attempt aborts the upload left', async () => {
    const key = 'kill/at-last-part-00000000.db';
    const report = await killThenRetry(key, `upload-part:${lastPart}`, lastPart);
    expect(await unfinished(key)).toEqual([]);
    expect(await readObject(s3.client, { bucket: s3.bucket, key })).toMatchObject({ sha256: report.sha256 });
    expect(report.abortedUploads).toBe(1);
  });

  it('killed after completing, before reading back, the next attempt replaces the object and leaves nothing', async () => {
    const key = 'kill/at-completed-00000000.db';
    const killed = await snapshot(key, 'upload-completed');
    expect(killed.signal).toBe('SIGKILL');
    expect(await unfinished(key)).toEqual([]);
    const retry = await snapshot(key);
    expect(retry.code, retry.stderr).toBe(0);
    const report = JSON.parse(retry.stdout) as { sha256: string };
    expect(await readObject(s3.client, { bucket: s3.bucket, key })).toMatchObject({ sha256: report.sha256 });
    expect(await unfinished(key)).toEqual([]);
  });

  it('killed at three attempts in a row, each attempt aborts what the one before left, the last leaves none', async () => {
    const key = 'kill/three-times-00000000.db';
    for (const [point, parts] of [
      ['upload-part:1', 1],
      ['upload-part:3', 3],
      [`upload-part:${lastPart}`, lastPart],
    ] as const) {
      expect((await snapshot(key, point)).signal).toBe('SIGKILL');
      expect((await unfinished(key)).map((u) => u.parts)).toEqual([partsLeftAfter(parts)]);
    }
    const retry = await snapshot(key);
    expect(retry.code, retry.stderr).toBe(0);
    expect(await unfinished(key)).toEqual([]);
    expect(JSON.parse(retry.stdout)).toMatchObject({ abortedUploads: 1 });
  });

  it.each([
    ['its first part, others in flight', 'upload-part:1'],
    ['its third part', 'upload-part:3'],
  ])('stopped with SIGTERM after %s (its Pod deleted), it aborts its own upload and says so', async (_, point) => {
    const key = `kill/terminated-${point.replace(':', '-')}-00000000.db`;
    const got = await agent(['snapshot', '--endpoint', endpoint, ...where(key)], point, 'SIGTERM');
    expect(got.code).toBe(1);
    expect(got.stderr).toContain('snapshot failed: stopped by SIGTERM (the Pod is being deleted)');
    expect(await unfinished(key)).toEqual([]);
    await expect(readObject(s3.client, { bucket: s3.bucket, key })).rejects.toThrow(/NoSuchKey|not exist/i);
  });

  it('delete-snapshot of a snapshot whose only run was killed mid-upload leaves no upload and no object', async () => {
    const key = 'kill/deleted-00000000.db';
    expect((await snapshot(key, 'upload-part:3')).signal).toBe('SIGKILL');
    expect(await unfinished(key)).toHaveLength(1);
    const got = await agent(['delete-snapshot', ...where(key)]);
    expect(got.code, got.stderr).toBe(0);
    expect(await unfinished(key)).toEqual([]);
    await expect(readObject(s3.client, { bucket: s3.bucket, key })).rejects.toThrow(/NoSuchKey|not exist/i);
    expect(JSON.parse(got.stdout)).toEqual({ deleted: `s3://${s3.bucket}/${key}`, abortedUploads: 1 });
  });

  it('--sweep-older-than aborts stale uploads to snapshot names beside the key, and nothing else', async () => {
    const dir = 'sweep/ns/cluster/';
    // A run killed on its Job's last attempt, of another snapshot of the same cluster: nothing retries it.
    expect((await snapshot(`${dir}failed-aaaaaaaa.db`, 'upload-part:1')).signal).toBe('SIGKILL');
    // The same, of another cluster; and an upload beside it that is not a snapshot's.
    expect((await snapshot('sweep/ns/other/failed-dddddddd.db', 'upload-created')).signal).toBe('SIGKILL');
    await s3.client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: `${dir}notes.txt` }));
    // Until the store says each was begun over 2 s ago (it keeps whole seconds).
    const begun = (await unfinished('sweep/')).map((u) => u.initiated?.getTime() ?? Infinity);
    expect(begun).toHaveLength(3);
    while (begun.some((t) => Date.now() - t <= 3000)) await delay(200);

    const got = await snapshot(`${dir}next-cccccccc.db`, undefined, ['--sweep-older-than', '2']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ abortedUploads: 1 });
    expect((await unfinished('sweep/')).map((u) => u.key).sort()).toEqual([
      `${dir}notes.txt`,
      'sweep/ns/other/failed-dddddddd.db',
    ]);
  });
});
