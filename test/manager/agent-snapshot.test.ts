import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateMultipartUploadCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../localcluster/until.ts';
import { readObject } from '../../effects/s3/index.ts';
import { runAgentCommand } from '../../manager/agent.ts';
import { withDeadline } from '../../manager/agent-snapshot.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';
import { binary, run as runTool } from '../../localcluster/controlplane/tools.ts';
import { LocalS3 } from '../effects/s3/local-s3.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '../../manager/cli.ts');

describe('agent snapshot against a real etcd and a real S3-compatible server', { timeout: 120_000 }, () => {
  const local = new LocalEtcd('agent-snap');
  const s3 = new LocalS3();
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-snapshot-'));
  const termination = join(dir, 'termination-log');
  let endpoint = '';
  let revision = 0;
  beforeAll(async () => {
    await Promise.all([local.startSeed('m0'), s3.start()]);
    endpoint = local.resolve(local.ref).clientURL('m0');
    const kv = local.clients.member(local.ref, 'm0');
    for (let i = 0; i < 50; i++) revision = Number((await kv.put(`k${i}`).value('v').exec()).header.revision);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([local.stop(), s3.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the agent in-process with the S3 credentials in its environment, as the Job's Pod has them. */
  async function agent(args: string[], env: NodeJS.ProcessEnv = {}, command = 'snapshot') {
    let [out, err] = ['', ''];
    writeFileSync(termination, '');
    const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void (err += s) };
    const code = await runAgentCommand([command, ...args], io, { terminationLog: termination, env });
    return { code, out, err, message: readFileSync(termination, 'utf8') };
  }
  const credentials = () => ({
    AWS_ACCESS_KEY_ID: s3.endpoint.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.endpoint.secretAccessKey,
  });
  const s3Args = (key: string) => [
    ...['--endpoint', endpoint, '--s3-bucket', s3.bucket, '--s3-key', key],
    ...['--s3-endpoint', s3.endpoint.endpoint!, '--s3-force-path-style'],
  ];

  it('stores to S3 and reports location, size, sha256, revision, version and its time, as the object is', async () => {
    const got = await agent(s3Args('demo/one.db'), credentials());
    expect(got.err).toBe('');
    expect(got.code).toBe(0);
    const report = JSON.parse(got.out) as Record<string, unknown>;
    expect(report).toMatchObject({ location: `s3://${s3.bucket}/demo/one.db`, revision, etcdVersion: '3.6.16' });
    const { start, store, check, total } = report.seconds as Record<string, number>;
    expect([start, store, check].every((s) => s! >= 0)).toBe(true);
    expect(start! + store! + check!).toBeCloseTo(total!, 2);
    expect(await readObject(s3.client, { bucket: s3.bucket, key: 'demo/one.db' })).toEqual({
      size: report.size,
      sha256: report.sha256,
    });
    expect(got.message).toBe(got.out.trim());
  });

  it('stores to a file that is whole or absent, never partial', async () => {
    const file = join(dir, 'one.db');
    const got = await agent(['--endpoint', endpoint, '--file', file]);
    expect(got.code).toBe(0);
    const report = JSON.parse(got.out) as { size: number; location: string };
    expect(report.location).toBe(file);
    expect(readFileSync(file).length).toBe(report.size);
    expect(() => readFileSync(`${file}.partial`)).toThrow(/ENOENT/);
  });

  it('without credentials fails with exit 1 and says which variables, leaving no object', async () => {
    const got = await agent(s3Args('demo/no-creds.db'));
    expect(got.code).toBe(1);
    expect(got.err).toBe('snapshot failed: S3 needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set\n');
    expect(got.message).toBe(got.err.trim());
  });

  it('with wrong credentials fails and never prints the secret', async () => {
    const wrong = { AWS_ACCESS_KEY_ID: s3.endpoint.accessKeyId, AWS_SECRET_ACCESS_KEY: 'not-the-secret-1234' };
    const got = await agent(s3Args('demo/wrong.db'), wrong);
    expect(got.code).toBe(1);
    expect(got.err).toMatch(/^snapshot failed: /);
    expect(got.err + got.out + got.message).not.toContain('not-the-secret-1234');
  });

  it('a member that does not answer fails within its timeout', async () => {
    const got = await agent(['--endpoint', 'http://127.0.0.1:1', '--file', join(dir, 'never.db'), '--timeout', '5']);
    expect(got.code).toBe(1);
    expect(got.err).toMatch(/^snapshot failed: /);
    expect(() => readFileSync(join(dir, 'never.db.partial'))).toThrow(/ENOENT/);
  });

  it('runs as the operator image runs it: the real command line', async () => {
    const { stdout } = await run(process.execPath, [cli, 'agent', 'snapshot', ...s3Args('demo/cli.db')], {
      env: { ...process.env, ...credentials() },
    });
    expect(JSON.parse(stdout)).toMatchObject({ location: `s3://${s3.bucket}/demo/cli.db`, revision });
  });

  it('delete-snapshot deletes the object and aborts uploads to its key that never completed', async () => {
    const key = 'demo/to-delete.db';
    expect((await agent(s3Args(key), credentials())).code).toBe(0);
    // What an agent killed mid-upload leaves: an upload that never completed, under the same key.
    const left = await s3.client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key: key }));
    const uploads = async () =>
      ((await s3.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }))).Uploads ?? []).filter(
        (u) => u.Key === key,
      );
    expect((await uploads()).map((u) => u.UploadId)).toEqual([left.UploadId]);
    const where = ['--s3-bucket', s3.bucket, '--s3-key', key, '--s3-endpoint', s3.endpoint.endpoint!];
    const got = await agent([...where, '--s3-force-path-style'], credentials(), 'delete-snapshot');
    expect(got.err).toBe('');
    expect(JSON.parse(got.out)).toEqual({ deleted: `s3://${s3.bucket}/${key}`, abortedUploads: 1 });
    await expect(readObject(s3.client, { bucket: s3.bucket, key })).rejects.toThrow(/NoSuchKey|not exist/i);
    expect(await uploads()).toEqual([]);
    // Deleting what is already gone is done, not an error: a Job run again after a crash.
    const again = await agent([...where, '--s3-force-path-style'], credentials(), 'delete-snapshot');
    expect(again.code).toBe(0);
  });

  it('stores to a file in a directory it makes, and delete-snapshot removes the file and a leftover .partial', async () => {
    const file = join(dir, 'sub', 'dir', 'two.db');
    expect((await agent(['--endpoint', endpoint, '--file', file])).code).toBe(0);
    writeFileSync(`${file}.partial`, 'left by a killed run');
    const got = await agent(['--file', file], {}, 'delete-snapshot');
    expect(got.code).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(`${file}.partial`)).toBe(false);
  });

  it("fetch-snapshot writes a stored snapshot whole after checking etcd's hash and the sha256 it was stored with", async () => {
    const stored = JSON.parse((await agent(s3Args('demo/fetch.db'), credentials())).out) as {
      sha256: string;
      size: number;
    };
    const where = [
      '--s3-bucket',
      s3.bucket,
      '--s3-key',
      'demo/fetch.db',
      '--s3-endpoint',
      s3.endpoint.endpoint!,
      '--s3-force-path-style',
    ];
    const to = join(dir, 'restore', 'snapshot.db');
    const got = await agent([...where, '--sha256', stored.sha256, '--to', to], credentials(), 'fetch-snapshot');
    expect(got.err).toBe('');
    expect(JSON.parse(got.out)).toMatchObject({ sha256: stored.sha256, size: stored.size });
    expect(readFileSync(to).length).toBe(stored.size);

    const wrong = await agent([...where, '--sha256', 'a'.repeat(64), '--to', to], credentials(), 'fetch-snapshot');
    // Not what was stored: no retry fixes it, and the exit code says so (a seed's restore then ends).
    expect(wrong.code).toBe(4);
    expect(wrong.message).toMatch(
      /^fetch-snapshot failed: s3:\/\/.* has sha256 [0-9a-f]{64} \(\d+ bytes\), not the a{64} it was stored with$/,
    );
    expect(existsSync(to)).toBe(false);
  });

  it("fetch-snapshot refuses a snapshot with one byte changed, by etcd's own hash, and leaves nothing", async () => {
    const file = join(dir, 'good.db');
    expect((await agent(['--endpoint', endpoint, '--file', file])).code).toBe(0);
    const bytes = readFileSync(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    writeFileSync(join(dir, 'bad.db'), bytes);
    const to = join(dir, 'fetched-bad.db');
    const got = await agent(['--file', join(dir, 'bad.db'), '--to', to], {}, 'fetch-snapshot');
    expect(got.code).toBe(4);
    expect(got.message).toMatch(
      /^fetch-snapshot failed: snapshot of \d+ bytes does not match the sha256 etcd sent with it$/,
    );
    expect(existsSync(to)).toBe(false);
    expect(existsSync(`${to}.partial`)).toBe(false);
  });

  it('fetch-snapshot of a stored file or object that is gone exits 4 (no retry fixes it), saying which', async () => {
    const to = join(dir, 'fetched-gone.db');
    const file = await agent(['--file', join(dir, 'gone.db'), '--to', to], {}, 'fetch-snapshot');
    expect(file).toMatchObject({ code: 4, message: `fetch-snapshot failed: ${join(dir, 'gone.db')} does not exist` });
    const where = [
      ...['--s3-bucket', s3.bucket, '--s3-key', 'demo/gone.db'],
      ...['--s3-endpoint', s3.endpoint.endpoint!, '--s3-force-path-style'],
    ];
    const object = await agent([...where, '--to', to], credentials(), 'fetch-snapshot');
    expect(object).toMatchObject({
      code: 4,
      message: `fetch-snapshot failed: s3://${s3.bucket}/demo/gone.db does not exist`,
    });
    expect(existsSync(to)).toBe(false);
  });

  it('finish-restore puts the restored data dir in place once, and keeps etcd data already there', async () => {
    const file = join(dir, 'for-restore.db');
    expect((await agent(['--endpoint', endpoint, '--file', file])).code).toBe(0);
    const work = join(dir, 'work');
    const restore = async () => {
      const restored = join(work, 'restore', 'data');
      rmSync(join(work, 'restore'), { recursive: true, force: true });
      const peer = [
        '--initial-cluster',
        'x=http://127.0.0.1:2380',
        '--initial-advertise-peer-urls',
        'http://127.0.0.1:2380',
      ];
      await runTool(await binary('etcdutl', '3.6.16'), [
        'snapshot',
        'restore',
        file,
        '--data-dir',
        restored,
        '--name',
        'x',
        ...peer,
      ]);
      return restored;
    };
    const args = (restored: string) => [
      '--restored',
      restored,
      '--data-dir',
      join(work, 'data'),
      '--clean',
      join(work, 'restore'),
    ];
    const first = await agent(args(await restore()), {}, 'finish-restore');
    expect(JSON.parse(first.out)).toEqual({ dataDir: join(work, 'data'), restored: true });
    expect(existsSync(join(work, 'data', 'member', 'snap', 'db'))).toBe(true);
    expect(existsSync(join(work, 'restore'))).toBe(false);
    // A Pod started again after the restore finished: the data etcd may have written since stays.
    const again = await agent(args(await restore()), {}, 'finish-restore');
    expect(JSON.parse(again.out)).toEqual({ dataDir: join(work, 'data'), restored: false });
    expect(existsSync(join(work, 'restore'))).toBe(false);
  });
});

describe('agent fetch-snapshot --etcd-version: the storage version a snapshot holds', { timeout: 120_000 }, () => {
  const local = new LocalEtcd('agent-snap-37', '3.7.3');
  const s3 = new LocalS3();
  const dir = mkdtempSync(join(os.tmpdir(), 'agent-storage-version-'));
  const termination = join(dir, 'termination-log');
  const env = () => ({
    AWS_ACCESS_KEY_ID: s3.endpoint.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.endpoint.secretAccessKey,
  });
  const at = () => [
    ...['--s3-bucket', s3.bucket, '--s3-key', 'demo/37.db'],
    ...['--s3-endpoint', s3.endpoint.endpoint!, '--s3-force-path-style'],
  ];
  async function agent(command: string, args: string[]) {
    let [out, err] = ['', ''];
    writeFileSync(termination, '');
    const io = { stdout: (s: string) => void (out += s), stderr: (s: string) => void (err += s) };
    const code = await runAgentCommand([command, ...args], io, { terminationLog: termination, env: env() });
    return { code, out, err, message: readFileSync(termination, 'utf8') };
  }
  beforeAll(async () => {
    await Promise.all([local.startSeed('m0'), s3.start()]);
    await local.clients.member(local.ref, 'm0').put('k').value('v').exec();
    // etcd 3.7 writes its storage version once the cluster version is set: a snapshot taken
    // before that has none, so wait until etcdutl reads 3.7.0 in one.
    const endpoint = local.resolve(local.ref).clientURL('m0');
    const file = join(dir, 'probe.db');
    await until('a snapshot of storage version 3.7.0', async () => {
      if ((await agent('snapshot', ['--endpoint', endpoint, '--file', file])).code !== 0) return undefined;
      const seen = await runTool(await binary('etcdutl', '3.7.3'), ['snapshot', 'status', file, '-w', 'json']);
      return (JSON.parse(seen) as { version?: string }).version === '3.7.0' ? true : undefined;
    });
    expect((await agent('snapshot', ['--endpoint', endpoint, ...at()])).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([local.stop(), s3.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a 3.7 snapshot for etcd 3.6.16 saying why, read from S3 or written to a file (then removed)', async () => {
    const checked = await agent('fetch-snapshot', [...at(), '--etcd-version', '3.6.16']);
    expect(checked.code).toBe(1);
    expect(checked.message).toBe(
      `fetch-snapshot failed: s3://${s3.bucket}/demo/37.db: the snapshot holds data of storage version 3.7.0 ` +
        '(written by etcd 3.7), newer than etcd 3.6.16 can run (etcd refuses it at start: version "3.7.0" is not ' +
        'supported); restore it into a cluster of etcd 3.7 or later, or restore a snapshot taken before the upgrade to 3.7',
    );
    const to = join(dir, 'restore', 'snapshot.db');
    const written = await agent('fetch-snapshot', [...at(), '--to', to, '--etcd-version', '3.6.16']);
    expect(written.code).toBe(1);
    expect(written.message).toMatch(/storage version 3\.7\.0 .* newer than etcd 3\.6\.16/);
    expect(existsSync(to)).toBe(false);
  });

  it('takes it for etcd 3.7.3 and reports its storage version', async () => {
    const got = await agent('fetch-snapshot', [...at(), '--etcd-version', '3.7.3']);
    expect(got.err).toBe('');
    expect(JSON.parse(got.out)).toMatchObject({ location: `s3://${s3.bucket}/demo/37.db`, storageVersion: '3.7.0' });
  });

  it('refuses an --etcd-version that is no version', async () => {
    const got = await agent('fetch-snapshot', [...at(), '--etcd-version', 'v3.7']);
    expect(got.code).toBe(2);
    expect(got.err).toMatch(/--etcd-version must be a version such as 3\.6\.16, not 'v3\.7'/);
  });
});

describe('recording what a snapshot holds has a deadline', () => {
  it('a record call that never answers is given up at its deadline, saying so; one that answers is returned', async () => {
    await expect(withDeadline(new Promise(() => undefined), 50)).rejects.toThrow('no answer within 0.05 s');
    await expect(withDeadline(Promise.resolve(7), 50)).resolves.toBe(7);
  });
});
