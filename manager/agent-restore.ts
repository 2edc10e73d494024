/**
 * The restore side of the agent, run by a restore's init containers and a verify Job from the
 * operator image: `fetch-snapshot` reads a stored snapshot (S3 or a file) to a file, checking its
 * sha256 and that the etcd to run on it can read its storage version; `finish-restore` moves a
 * restored data directory into place, durably.
 */
import { closeSync, createReadStream, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { digestOf, type StoredObject } from '../effects/digest.ts';
import { SnapshotIntegrityError, withEtcdHash } from '../effects/etcd/snapshot.ts';
import { snapshotStorageVersion, storageVersionRefusal, type ReadAt } from '../effects/etcd/storage-version.ts';
import { writeFileStream } from '../effects/volume/write-file.ts';
import { findEtcdData, SNAPSHOT_UNREADABLE_EXIT_CODE } from './agent.ts';
import { clientFor, destinationOf, destinationOptions, type Destination } from './agent-snapshot.ts';

interface FetchArgs {
  readonly from: Destination;
  readonly sha256?: string;
  /** Where to write it (whole or absent); left out, it is only read and checked. */
  readonly to?: string;
  /** A directory removed first (what an earlier, interrupted restore left). */
  readonly clear?: string;
  /** The etcd version that is to run on the data: a snapshot of a newer storage version is refused. */
  readonly etcdVersion?: string;
}

/** The stored snapshot is missing, or is not what was stored: no retry fixes it (exit SNAPSHOT_UNREADABLE_EXIT_CODE). */
export class SnapshotUnreadableError extends Error {
  override readonly name = 'SnapshotUnreadableError';
  readonly exitCode = SNAPSHOT_UNREADABLE_EXIT_CODE;
}

/** An S3 answer that the object is not there. */
const missingObject = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404;
};

/** Parses the arguments of `fetch-snapshot`; throws a TypeError that says what is wrong. */
export function parseFetchArgs(argv: readonly string[]): FetchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      ...destinationOptions,
      sha256: { type: 'string' },
      to: { type: 'string' },
      clear: { type: 'string' },
      'etcd-version': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.sha256 !== undefined && !/^[0-9a-f]{64}$/.test(values.sha256))
    throw new TypeError(`--sha256 must be 64 lowercase hexadecimal digits, not '${values.sha256}'`);
  const version = values['etcd-version'];
  if (version !== undefined && !/^\d+\.\d+\.\d+$/.test(version))
    throw new TypeError(`--etcd-version must be a version such as 3.6.16, not '${version}'`);
  return {
    from: destinationOf('fetch-snapshot', values),
    ...(values.sha256 ? { sha256: values.sha256 } : {}),
    ...(values.to ? { to: values.to } : {}),
    ...(values.clear ? { clear: values.clear } : {}),
    ...(version ? { etcdVersion: version } : {}),
  };
}

/**
 * Reads a stored snapshot whole and checks it: etcd's own hash at its end, and the sha256 it was
 * stored with when given; with `to`, writes it there (whole or absent). With `etcdVersion`, also
 * reads the storage version the snapshot holds (reported) and refuses one that etcd of that
 * version cannot start on (a newer minor's). A snapshot that fails a check is refused, and
 * nothing is left at `to`.
 */
export async function fetchSnapshot(
  args: FetchArgs,
  env: NodeJS.ProcessEnv,
): Promise<StoredObject & { location: string; storageVersion?: string }> {
  if (args.clear) rmSync(args.clear, { recursive: true, force: true });
  const from = args.from;
  let s3: S3Client | undefined;
  try {
    let source: AsyncIterable<Uint8Array>;
    let location: string;
    if (from.kind === 'file') {
      location = from.path;
      if (!existsSync(from.path)) throw new SnapshotUnreadableError(`${location} does not exist`);
      source = createReadStream(from.path);
    } else {
      s3 = clientFor(from, env);
      location = `s3://${from.bucket}/${from.key}`;
      const answer = await s3.send(new GetObjectCommand({ Bucket: from.bucket, Key: from.key })).catch((err) => {
        if (missingObject(err)) throw new SnapshotUnreadableError(`${location} does not exist`);
        throw err;
      });
      source = answer.Body as AsyncIterable<Uint8Array>;
    }
    const chunks = withEtcdHash(source);
    let stored: StoredObject;
    try {
      if (args.to) {
        mkdirSync(dirname(args.to), { recursive: true });
        stored = await writeFileStream(args.to, chunks);
      } else stored = await digestOf(chunks);
    } catch (err) {
      // Not what etcd wrote: read again, it would be the same bytes.
      if (err instanceof SnapshotIntegrityError) throw new SnapshotUnreadableError(err.message);
      throw err;
    }
    if (args.sha256 && stored.sha256 !== args.sha256) {
      if (args.to) rmSync(args.to, { force: true });
      throw new SnapshotUnreadableError(
        `${location} has sha256 ${stored.sha256} (${stored.size} bytes), not the ${args.sha256} it was stored with`,
      );
    }
    if (!args.etcdVersion) return { location, ...stored };
    // Read where it now is on this machine, else from the bucket: a few pages, not the whole again.
    const read = args.to ? fileReader(args.to) : from.kind === 'file' ? fileReader(from.path) : rangeReader(s3!, from);
    let storageVersion: string | undefined;
    try {
      storageVersion = await snapshotStorageVersion(read);
    } finally {
      await read.close();
    }
    const refusal = storageVersionRefusal(storageVersion, args.etcdVersion);
    if (refusal) {
      if (args.to) rmSync(args.to, { force: true });
      throw new Error(`${location}: ${refusal}`);
    }
    return { location, ...stored, ...(storageVersion ? { storageVersion } : {}) };
  } finally {
    s3?.destroy();
  }
}

/** Reads bytes of a local file at an offset; close() when done. */
function fileReader(file: string): ReadAt & { close(): Promise<void> } {
  const opened = open(file, 'r');
  const read = async (offset: number, length: number): Promise<Uint8Array> => {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await (await opened).read(buffer, 0, length, offset);
    return buffer.subarray(0, bytesRead);
  };
  return Object.assign(read, { close: async () => (await opened).close() });
}

/** Reads bytes of an S3 object at an offset, by ranged GETs. */
function rangeReader(s3: S3Client, at: { bucket: string; key: string }): ReadAt & { close(): Promise<void> } {
  const read: ReadAt = async (offset, length) => {
    const range = `bytes=${offset}-${offset + length - 1}`;
    const { Body } = await s3
      .send(new GetObjectCommand({ Bucket: at.bucket, Key: at.key, Range: range }))
      .catch((err: unknown) => {
        // Past the end of the object: nothing there, as a file read says.
        if ((err as { name?: string }).name === 'InvalidRange') return { Body: undefined };
        throw err;
      });
    return Body ? Body.transformToByteArray() : new Uint8Array();
  };
  return Object.assign(read, { close: () => Promise.resolve() });
}

/** Parses the arguments of `finish-restore`; throws a TypeError that says what is wrong. */
export function parseFinishArgs(argv: readonly string[]): { restored: string; dataDir: string; clean?: string } {
  const { values } = parseArgs({
    args: [...argv],
    options: { restored: { type: 'string' }, 'data-dir': { type: 'string' }, clean: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  if (!values.restored || !values['data-dir'])
    throw new TypeError('finish-restore needs --restored DIR and --data-dir DIR');
  return { restored: values.restored, dataDir: values['data-dir'], ...(values.clean ? { clean: values.clean } : {}) };
}

/**
 * Moves the data dir etcdutl restored into place, unless etcd data is there already (a Pod
 * started again after a restore that finished): the rename is atomic, so the data dir is the
 * old one or the restored one, never a mix. Then removes the working dir.
 */
export function finishRestore(args: { restored: string; dataDir: string; clean?: string }): {
  dataDir: string;
  restored: boolean;
} {
  const there = findEtcdData(args.dataDir);
  let restored = false;
  if (!(there.walFiles > 0 && there.db)) {
    const now = findEtcdData(args.restored);
    if (!(now.walFiles > 0 && now.db)) throw new Error(`${args.restored} holds no restored etcd data`);
    rmSync(args.dataDir, { recursive: true, force: true });
    renameSync(args.restored, args.dataDir);
    syncDir(dirname(args.dataDir));
    restored = true;
  }
  if (args.clean) rmSync(args.clean, { recursive: true, force: true });
  return { dataDir: args.dataDir, restored };
}

/** fsyncs a directory, so a rename in it survives a crash. */
function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
