/** `etcd-operator agent check-data` against data dirs a real etcd left, and empty or wiped ones. */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_GUARD_FILE, DATA_LOST_EXIT_CODE, findEtcdData, readGuard, runAgentCommand } from '../../manager/agent.ts';
import { LocalEtcd } from '../effects/etcd/local-etcd.ts';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'agent-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs the command in-process; returns the exit code and what it wrote. */
async function agent(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let [out, err] = ['', ''];
  const code = await runAgentCommand(
    args,
    { stdout: (s) => void (out += s), stderr: (s) => void (err += s) },
    { terminationLog: join(scratch, 'termination-log') },
  );
  return { code, out, err };
}

/** A copy of a data dir etcd `version` wrote, started as a seed and then killed. */
async function dataDirOf(version: string): Promise<string> {
  const local = new LocalEtcd(`agent-${version.replaceAll('.', '-')}`, version);
  try {
    await local.startSeed('m0');
    await local.kill('m0');
    const copy = join(scratch, `etcd-${version}`);
    await run('cp', ['-a', join(local.dir, 'm0'), copy]);
    return copy;
  } finally {
    await local.stop();
  }
}

describe('agent check-data on what etcd leaves on disk', () => {
  const dirs: Record<string, string> = {};
  beforeAll(async () => {
    for (const v of ['3.6.16', '3.5.35']) dirs[v] = await dataDirOf(v);
  }, 60_000);

  it.each(['3.6.16', '3.5.35'])('etcd %s leaves a WAL file and member/snap/db, which pass --expect-data', async (v) => {
    expect(findEtcdData(dirs[v]!)).toEqual({ walFiles: 1, db: true });
    const got = await agent('check-data', '--data-dir', dirs[v]!, '--expect-data');
    expect(got).toMatchObject({ code: 0, err: '' });
    expect(got.out).toMatch(/holds etcd data \(1 WAL file\(s\), a member\/snap\/db\)/);
  });

  it('a data dir whose WAL files are gone is lost, though the db is still there', async () => {
    const dir = join(scratch, 'no-wal');
    mkdirSync(join(dir, 'member', 'wal'), { recursive: true });
    mkdirSync(join(dir, 'member', 'snap'), { recursive: true });
    writeFileSync(join(dir, 'member', 'snap', 'db'), readFileSync(join(dirs['3.6.16']!, 'member', 'snap', 'db')));
    writeFileSync(join(dir, 'member', 'wal', '0.tmp'), '');
    expect((await agent('check-data', '--data-dir', dir, '--expect-data')).code).toBe(DATA_LOST_EXIT_CODE);
  });
});

describe("agent check-data: data is the member's own only with its guard", () => {
  it.each(['3.6.16', '3.5.35'])(
    'etcd %s starts on the guard written first; emptied and started anew, its new WAL and db are refused',
    async (v) => {
      const local = new LocalEtcd(`guard-${v.replaceAll('.', '-')}`, v);
      const dir = join(local.dir, 'm0');
      try {
        // The first Pod: check-data writes the guard, then etcd starts on that data dir.
        expect(await agent('check-data', '--data-dir', dir, '--guard', 'uid-m0')).toMatchObject({ code: 0 });
        expect(readGuard(dir)).toBe('uid-m0');
        await local.startSeed('m0');
        await local.kill('m0');
        const kept = await agent('check-data', '--data-dir', dir, '--expect-data', '--guard', 'uid-m0');
        expect(kept).toMatchObject({ code: 0, err: '' });
        expect(kept.out).toContain('its guard');
        // The volume is emptied under the member and etcd starts again on it: a WAL and a db
        // again, which the unguarded check takes for the member's data.
        rmSync(dir, { recursive: true });
        await local.start('m0', `m0=${local.peerURL('m0')}`, 'new');
        await local.kill('m0');
        expect(findEtcdData(dir)).toEqual({ walFiles: 1, db: true });
        expect((await agent('check-data', '--data-dir', dir, '--expect-data')).code).toBe(0);
        const lost = await agent('check-data', '--data-dir', dir, '--expect-data', '--guard', 'uid-m0');
        expect(lost.code).toBe(DATA_LOST_EXIT_CODE);
        expect(lost.err).toMatch(
          new RegExp(`^etcd data lost: .* holds 1 WAL file\\(s\\), a member/snap/db but not ${DATA_GUARD_FILE} `),
        );
      } finally {
        await local.stop();
      }
    },
    60_000,
  );

  it("another member's guard is not this member's", async () => {
    const dir = join(scratch, 'other-guard');
    const src = join(scratch, 'etcd-3.6.16');
    await run('cp', ['-a', src, dir]);
    await agent('check-data', '--data-dir', dir, '--guard', 'uid-a');
    const got = await agent('check-data', '--data-dir', dir, '--expect-data', '--guard', 'uid-b');
    expect(got.code).toBe(DATA_LOST_EXIT_CODE);
    expect(got.err).toContain('but another');
  });
});

describe('agent check-data on an empty volume', () => {
  it('with --expect-data: exit 3, one line on stderr and in the termination message, replacing what was there', async () => {
    const log = join(scratch, 'termination-log');
    writeFileSync(log, 'an older and much longer message from an earlier run of this container');
    const dir = join(scratch, 'empty');
    mkdirSync(dir);
    const got = await agent('check-data', '--data-dir', dir, '--expect-data');
    expect(got.code).toBe(DATA_LOST_EXIT_CODE);
    expect(got.out).toBe('');
    const message = readFileSync(log, 'utf8');
    expect(message).toBe(
      `etcd data lost: ${dir} holds 0 WAL file(s), no member/snap/db, though etcd ran on this member's volume before; ` +
        'the member is not started empty, the operator replaces it with a new member while quorum holds',
    );
    expect(got.err).toBe(`${message}\n`);
  });

  it('a data dir that does not exist at all counts as lost too', async () => {
    expect((await agent('check-data', '--data-dir', join(scratch, 'never-made'), '--expect-data')).code).toBe(
      DATA_LOST_EXIT_CODE,
    );
  });

  it('without --expect-data: a new member, exit 0 with a note', async () => {
    const got = await agent('check-data', '--data-dir', join(scratch, 'never-made'));
    expect(got.code).toBe(0);
    expect(got.out).toMatch(/holds no etcd data yet .*: etcd starts a new member there\n$/);
  });

  it('never creates a termination message file that is not there (outside a Pod)', async () => {
    const log = join(scratch, 'absent', 'termination-log');
    const code = await runAgentCommand(
      ['check-data', '--data-dir', join(scratch, 'never-made'), '--expect-data'],
      { stdout: () => {}, stderr: () => {} },
      { terminationLog: log },
    );
    expect(code).toBe(DATA_LOST_EXIT_CODE);
    expect(existsSync(log)).toBe(false);
  });
});

describe('agent command line', () => {
  it.each([
    [['check-data'], /needs --data-dir/],
    [['check-data', '--data-dir', 'x', '--frob'], /Unknown option '--frob'/],
    [['check-data', '--data-dir', 'x', 'extra'], /positional/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [[], /no command/],
    [['snapshot', '--file', 'x'], /needs --endpoint URL/],
    [['snapshot', '--endpoint', 'http://e:2379'], /exactly one of --s3-bucket\/--s3-key and --file/],
    [['snapshot', '--endpoint', 'http://e:2379', '--file', 'x', '--s3-bucket', 'b'], /exactly one of/],
    [['snapshot', '--endpoint', 'http://e:2379', '--s3-bucket', 'b'], /needs both --s3-bucket and --s3-key/],
    [['snapshot', '--endpoint', 'http://e:2379', '--file', 'x', '--timeout', '0'], /--timeout must be a whole number/],
  ])('%j is refused with exit 2 and the usage', async (args, why) => {
    const got = await agent(...args);
    expect(got.code).toBe(2);
    expect(got.err).toMatch(why);
    expect(got.err).toContain(
      'usage: etcd-operator agent check-data|snapshot|delete-snapshot|fetch-snapshot|finish-restore|verify-snapshot ARGS',
    );
  });

  it('the real command exits 3 for lost data, as the init container does', async () => {
    const cli = join(import.meta.dirname, '../../manager/cli.ts');
    const err = await run(process.execPath, [
      cli,
      'agent',
      'check-data',
      '--data-dir',
      join(scratch, 'never-made'),
      '--expect-data',
    ]).catch((e: unknown) => e as { code: number; stderr: string });
    expect(err).toMatchObject({ code: DATA_LOST_EXIT_CODE });
    expect((err as { stderr: string }).stderr).toMatch(/^etcd data lost: /);
  });
});
