/**
 * Proving a snapshot by restoring it: what is recorded of the member as a snapshot is taken
 * (etcd's HashKV and the key count at the snapshot's revision), and the check of a throwaway etcd
 * restored from the stored snapshot against that record. The throwaway etcd listens on loopback
 * only and is a cluster of one of its own: it serves no client and joins nothing.
 *
 * `verify-snapshot` (what a verify Job's agent runs) checks an etcd that its Pod's sidecar started
 * on the restored data; `verifySnapshotFile` does the whole round (sha256, etcdutl restore, etcd,
 * check, removal) in one process, for the tests and for measuring what verification costs.
 */
import { execFile, spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs, promisify } from 'node:util';
import { Etcd3 } from 'etcd3';
import { digestOf } from '../effects/digest.ts';
import type { SnapshotVerdict } from '../machines/types.ts';

/** What was recorded of the member when the snapshot was taken, at the snapshot's revision. */
export interface SnapshotRecord {
  /** The member's revision as the snapshot began: the snapshot holds every write up to it. */
  readonly revision: number;
  /** etcd's HashKV at `revision` (the MVCC keys from the compaction up to it). */
  readonly hashKV: number;
  /** The compacted revision HashKV began from (-1: never compacted): a hash is comparable only from the same one. */
  readonly compactRevision: number;
  /** Keys at `revision`. */
  readonly keys: number;
}

/** What a check of a restored snapshot found: what it checked, and what differed (none when verified). */
export type Verdict = SnapshotVerdict;

/** All keys: both key and range_end '\0'. */
const ALL = Buffer.from([0]);

/**
 * etcd's HashKV at a revision. etcd3's `maintenance.hashKV` names the method `hashKV`, which its
 * loaded proto calls `hashKv`: it fails with "client[method] is not a function", so the connection
 * pool is asked by the RPC's own name.
 */
async function hashKV(client: Etcd3, revision: number): Promise<{ hash: string | number; compact_revision: string }> {
  const pool = (
    client.maintenance as unknown as { client: { exec(s: string, m: string, r: object): Promise<unknown> } }
  ).client;
  return (await pool.exec('Maintenance', 'HashKV', { revision })) as { hash: number; compact_revision: string };
}

/** The HashKV and the key count of the etcd `client` talks to, at `revision`. */
export async function measureAt(client: Etcd3, revision: number): Promise<SnapshotRecord> {
  const hash = await hashKV(client, revision);
  const range = await client.kv.range({ key: ALL, range_end: ALL, count_only: true, revision, serializable: true });
  return {
    revision,
    hashKV: Number(hash.hash),
    compactRevision: Number(hash.compact_revision),
    keys: Number(range.count),
  };
}

/** Compares a restored etcd's measures (and its head revision) with the record; pure. */
export function compare(record: SnapshotRecord, restored: SnapshotRecord, head: number): Verdict {
  const differences: string[] = [];
  if (head < record.revision)
    differences.push(`the restored etcd is at revision ${head}, before the recorded ${record.revision}`);
  if (restored.compactRevision !== record.compactRevision)
    differences.push(
      `compacted at revision ${restored.compactRevision}, not the recorded ${record.compactRevision} (hashes are not comparable)`,
    );
  else if (restored.hashKV !== record.hashKV)
    differences.push(`hashKV at revision ${record.revision} is ${restored.hashKV}, not the recorded ${record.hashKV}`);
  if (restored.keys !== record.keys)
    differences.push(`${restored.keys} keys at revision ${record.revision}, not the recorded ${record.keys}`);
  const checked = `revision ${record.revision} (head ${head}), hashKV ${restored.hashKV}, ${restored.keys} keys`;
  return { verified: differences.length === 0, checked, differences };
}

/** Waits until the etcd at `endpoint` answers a status call, or the deadline passes. */
async function connect(endpoint: string, deadline: number): Promise<Etcd3> {
  for (;;) {
    const client = new Etcd3({ hosts: [endpoint], dialTimeout: 2000 });
    try {
      await client.maintenance.status();
      return client;
    } catch (err) {
      client.close();
      if (Date.now() > deadline) throw new Error(`the restored etcd at ${endpoint} did not answer`, { cause: err });
      await delay(200);
    }
  }
}

/** Checks the restored etcd at `endpoint` against the record. */
export async function checkRestored(endpoint: string, record: SnapshotRecord, timeoutMs = 60_000): Promise<Verdict> {
  const client = await connect(endpoint, Date.now() + timeoutMs);
  try {
    const head = Number((await client.maintenance.status()).header.revision);
    if (head < record.revision) return compare(record, { ...record, hashKV: -1, keys: -1 }, head);
    return compare(record, await measureAt(client, record.revision), head);
  } finally {
    client.close();
  }
}

/** The etcd binaries a whole round needs. */
export interface EtcdTools {
  readonly etcd: string;
  readonly etcdutl: string;
}

/** Ports on 127.0.0.1 for the throwaway etcd. */
export interface LoopbackPorts {
  readonly client: number;
  readonly peer: number;
}

const run = promisify(execFile);

/**
 * The whole round on one machine: the file's sha256 against the one recorded, etcdutl's restore
 * (which checks etcd's own hash at the file's end), a throwaway etcd on the restored data, the
 * check, then the etcd stopped and everything it wrote (in a new dir under `parent`) removed.
 * A failed step is a difference.
 */
export async function verifySnapshotFile(
  file: string,
  recorded: SnapshotRecord & { readonly sha256: string },
  tools: EtcdTools,
  ports: LoopbackPorts,
  parent: string = os.tmpdir(),
): Promise<Verdict> {
  const stored = await digestOf(createReadStream(file));
  if (stored.sha256 !== recorded.sha256)
    return {
      verified: false,
      checked: `sha256 of ${stored.size} bytes`,
      differences: [
        `sha256 is ${stored.sha256}, not the recorded ${recorded.sha256}: the file changed after it was stored`,
      ],
    };
  const dir = mkdtempSync(path.join(parent, 'etcd-verify-'));
  const peer = `http://127.0.0.1:${ports.peer}`;
  const client = `http://127.0.0.1:${ports.client}`;
  const data = path.join(dir, 'data');
  try {
    try {
      await run(tools.etcdutl, [
        ...['snapshot', 'restore', file, `--data-dir=${data}`, '--name=verify'],
        ...[`--initial-cluster=verify=${peer}`, `--initial-advertise-peer-urls=${peer}`],
      ]);
    } catch (err) {
      const why = String((err as { stderr?: string }).stderr ?? err)
        .trim()
        .split('\n')
        .pop();
      return { verified: false, checked: 'etcdutl snapshot restore', differences: [`etcdutl refused it: ${why}`] };
    }
    const etcd = spawn(
      tools.etcd,
      [
        ...[
          '--name=verify',
          `--data-dir=${data}`,
          `--listen-client-urls=${client}`,
          `--advertise-client-urls=${client}`,
        ],
        ...[`--listen-peer-urls=${peer}`, `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=verify=${peer}`],
        '--listen-metrics-urls=',
      ],
      { stdio: 'ignore' },
    );
    try {
      return await checkRestored(client, recorded);
    } finally {
      const exited = new Promise((resolve) => etcd.once('exit', resolve));
      if (etcd.exitCode === null) etcd.kill('SIGKILL');
      await exited;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What `verify-snapshot` is asked: the restored etcd, and what was recorded. */
export interface VerifyArgs {
  readonly endpoint: string;
  readonly record: SnapshotRecord;
  readonly timeoutMs: number;
}

const wholeNumber = (name: string, value: string | undefined, min = 0): number => {
  const n = Number(value);
  if (value === undefined || value === '' || !Number.isSafeInteger(n) || n < min)
    throw new TypeError(`--${name} must be a whole number of at least ${min}, not '${value}'`);
  return n;
};

/** Parses the arguments of `verify-snapshot`; throws a TypeError that says what is wrong. */
export function parseVerifyArgs(argv: readonly string[]): VerifyArgs {
  const options = {
    endpoint: { type: 'string' },
    revision: { type: 'string' },
    'hash-kv': { type: 'string' },
    'compact-revision': { type: 'string' },
    keys: { type: 'string' },
    timeout: { type: 'string', default: '600' },
  } as const;
  const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  if (!values.endpoint?.startsWith('http://127.0.0.1:'))
    throw new TypeError('verify-snapshot needs --endpoint http://127.0.0.1:PORT (the restored etcd beside it)');
  return {
    endpoint: values.endpoint,
    record: {
      revision: wholeNumber('revision', values.revision, 1),
      hashKV: wholeNumber('hash-kv', values['hash-kv']),
      compactRevision: wholeNumber('compact-revision', values['compact-revision'], -1),
      keys: wholeNumber('keys', values.keys),
    },
    timeoutMs: wholeNumber('timeout', values.timeout, 1) * 1000,
  };
}
