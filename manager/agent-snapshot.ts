/**
 * `etcd-operator agent snapshot`: run by a snapshot Job from the operator image. It streams one
 * member's snapshot to S3 or to a file on a mounted volume, reads it back to check it, and
 * reports what it stored as one JSON line, on stdout and as the container's termination message
 * (where the operator reads it from the Pod's status). The manager never holds the bytes, nor
 * the S3 credentials: the Job's Pod gets those from their Secret as environment variables.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import type { StoredObject } from '../effects/digest.ts';
import { readSnapshot, snapshotGrpcOptions, type SnapshotInfo } from '../effects/etcd/snapshot.ts';
import { measureAt } from './agent-verify.ts';
import { failpoint } from './failpoints.ts';
import { abortUploads, s3Client, uploadStream, verifyObject, type UploadProgress } from '../effects/s3/index.ts';
import { tidyReport, tidyUploads } from './agent-uploads.ts';
import { verifyFile, writeFileStream } from '../effects/volume/write-file.ts';

/**
 * How long recording HashKV and the key count may take once the snapshot is stored. HashKV reads
 * every key and version since the last compaction; a member that stops answering must not hold
 * the Job until its own deadline with the snapshot already stored.
 */
export const RECORD_MS = 120_000;

/** `work`, or a rejection once `ms` have passed without it. */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a snapshot run stored, as printed. */
export interface SnapshotReport extends StoredObject {
  /** `s3://bucket/key` or the file's path. */
  readonly location: string;
  readonly revision: number;
  readonly etcdVersion: string;
  /** etcd's HashKV at `revision` on the member, and the compaction it began from (agent-verify.ts). */
  readonly hashKV?: number;
  readonly compactRevision?: number;
  /** Keys on the member at `revision`. */
  readonly keys?: number;
  /** Why hashKV and keys could not be recorded (the snapshot is stored and checked all the same). */
  readonly notRecorded?: string;
  /** S3: uploads that earlier, interrupted runs left and this one aborted (its key's, then stale ones beside it). */
  readonly abortedUploads?: number;
  /** S3: why some could not be aborted (the snapshot itself is stored and checked). */
  readonly uploadsNotAborted?: string;
  /** Where the run's time went. */
  readonly seconds?: RunSeconds;
}

/**
 * Where a run's time went, in seconds: from the process's start to the snapshot's first call
 * (Node and the agent's modules), streaming it to its store, reading it back (HashKV recorded
 * meanwhile, then S3's uploads tidied), and in all.
 */
export interface RunSeconds {
  readonly start: number;
  readonly store: number;
  readonly check: number;
  readonly total: number;
}

/** Seconds since the process started, to the millisecond. */
const sinceStart = (): number => Math.round(performance.now()) / 1000;
const round = (s: number): number => Math.round(s * 1000) / 1000;

/** Where a snapshot is stored: an S3 object or a file on a mounted volume. */
export type Destination =
  | {
      readonly kind: 's3';
      readonly bucket: string;
      readonly key: string;
      readonly endpoint?: string;
      readonly region?: string;
      readonly forcePathStyle: boolean;
    }
  | { readonly kind: 'file'; readonly path: string };

/** The PEM files an https endpoint is called with: the CA to check it against, and the client certificate. */
interface EtcdTLSFiles {
  readonly cacert: string;
  readonly cert: string;
  readonly key: string;
}

interface SnapshotArgs {
  readonly endpoint: string;
  readonly tls?: EtcdTLSFiles;
  readonly to: Destination;
  readonly timeoutMs: number;
  /** S3: also abort uploads beside the key begun longer ago than this (no Job can still run them). */
  readonly sweepOlderThanMs?: number;
}

/** The options that name a destination, for each command that takes one. */
export const destinationOptions = {
  's3-bucket': { type: 'string' },
  's3-key': { type: 'string' },
  's3-endpoint': { type: 'string' },
  's3-region': { type: 'string' },
  's3-force-path-style': { type: 'boolean', default: false },
  file: { type: 'string' },
} as const;

const sweepOption = { 'sweep-older-than': { type: 'string' } } as const;

/** `--sweep-older-than SECONDS` in milliseconds, when given; throws a TypeError that says what is wrong. */
function sweepOf(value: string | undefined, to: Destination): { sweepOlderThanMs?: number } {
  if (value === undefined) return {};
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds <= 0)
    throw new TypeError(`--sweep-older-than must be a whole number of seconds, not '${value}'`);
  if (to.kind !== 's3') throw new TypeError('--sweep-older-than goes with an S3 destination');
  return { sweepOlderThanMs: seconds * 1000 };
}

type DestinationValues = {
  readonly 's3-bucket'?: string | undefined;
  readonly 's3-key'?: string | undefined;
  readonly 's3-endpoint'?: string | undefined;
  readonly 's3-region'?: string | undefined;
  readonly 's3-force-path-style'?: boolean | undefined;
  readonly file?: string | undefined;
};

/** The one destination the arguments name; throws a TypeError that says what is wrong. */
export function destinationOf(command: string, values: DestinationValues): Destination {
  const s3 = values['s3-bucket'] !== undefined || values['s3-key'] !== undefined;
  if (s3 === (values.file !== undefined))
    throw new TypeError(`${command} needs exactly one of --s3-bucket/--s3-key and --file`);
  if (values.file !== undefined) return { kind: 'file', path: values.file };
  if (!values['s3-bucket'] || !values['s3-key'])
    throw new TypeError(`an S3 ${command} needs both --s3-bucket and --s3-key`);
  return {
    kind: 's3',
    bucket: values['s3-bucket'],
    key: values['s3-key'],
    ...(values['s3-endpoint'] ? { endpoint: values['s3-endpoint'] } : {}),
    ...(values['s3-region'] ? { region: values['s3-region'] } : {}),
    forcePathStyle: values['s3-force-path-style'] ?? false,
  };
}

/** Parses the arguments; throws a TypeError that says what is wrong. */
export function parseSnapshotArgs(argv: readonly string[]): SnapshotArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      endpoint: { type: 'string' },
      cacert: { type: 'string' },
      cert: { type: 'string' },
      key: { type: 'string' },
      timeout: { type: 'string', default: '3600' },
      ...destinationOptions,
      ...sweepOption,
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values.endpoint) throw new TypeError('snapshot needs --endpoint URL (the etcd member to take it from)');
  const to = destinationOf('snapshot', values);
  const timeout = Number(values.timeout);
  if (!Number.isInteger(timeout) || timeout <= 0)
    throw new TypeError(`--timeout must be a whole number of seconds, not '${values.timeout}'`);
  const { cacert, cert, key } = values;
  const tls = cacert !== undefined || cert !== undefined || key !== undefined;
  if (tls && (!cacert || !cert || !key))
    throw new TypeError('an https endpoint needs all of --cacert, --cert and --key (PEM files)');
  if (tls && !values.endpoint.startsWith('https:'))
    throw new TypeError('--cacert, --cert and --key go with an https --endpoint');
  return {
    endpoint: values.endpoint,
    ...(cacert && cert && key ? { tls: { cacert, cert, key } } : {}),
    to,
    timeoutMs: timeout * 1000,
    ...sweepOf(values['sweep-older-than'], to),
  };
}

/** What `delete-snapshot` is asked: the stored snapshot, and how old a stale upload beside it is. */
interface DeleteArgs {
  readonly to: Destination;
  readonly sweepOlderThanMs?: number;
}

/** Parses the arguments of `delete-snapshot`; throws a TypeError that says what is wrong. */
export function parseDeleteArgs(argv: readonly string[]): DeleteArgs {
  const options = { ...destinationOptions, ...sweepOption };
  const { values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  const to = destinationOf('delete-snapshot', values);
  return { to, ...sweepOf(values['sweep-older-than'], to) };
}

/** The S3 client of a destination, with the credentials from the environment. */
export function clientFor(to: Extract<Destination, { kind: 's3' }>, env: NodeJS.ProcessEnv): S3Client {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  if (!accessKeyId || !secretAccessKey) throw new TypeError('S3 needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set');
  return s3Client({ ...to, accessKeyId, secretAccessKey });
}

/**
 * Deletes a stored snapshot and whatever an interrupted run left: S3 uploads never completed
 * under its key (and, with a sweep age, stale ones beside it), or the file's `.partial`.
 * Deleting what is not there is done, not an error.
 */
export async function deleteSnapshot(
  args: DeleteArgs,
  env: NodeJS.ProcessEnv,
): Promise<{ deleted: string; abortedUploads?: number; uploadsNotAborted?: string }> {
  const to = args.to;
  if (to.kind === 'file') {
    rmSync(`${to.path}.partial`, { force: true });
    rmSync(to.path, { force: true });
    return { deleted: to.path };
  }
  const s3 = clientFor(to, env);
  try {
    const aborted = await abortUploads(s3, to);
    await s3.send(new DeleteObjectCommand({ Bucket: to.bucket, Key: to.key }));
    const swept =
      args.sweepOlderThanMs === undefined ? [] : [await tidyUploads(s3, to, { olderThanMs: args.sweepOlderThanMs })];
    return { deleted: `s3://${to.bucket}/${to.key}`, ...tidyReport({ aborted }, ...swept) };
  } finally {
    s3.destroy();
  }
}

/** The agent's failpoints at the boundaries of its upload (failpoints.ts; off unless a test arms one). */
function uploadFailpoints(p: UploadProgress): void {
  failpoint(p.step === 'created' ? 'upload-created' : p.step === 'part' ? 'upload-part' : 'upload-completed');
}

/**
 * Uploads the snapshot to S3 and reads it back through `check` (which records the member's
 * figures meanwhile). Uploads under its
 * key that an earlier run of this snapshot's Job began and never finished (a Pod killed, then
 * retried) are aborted first; any begun meanwhile (a Pod still going as its replacement started)
 * are aborted after, with the stale ones beside it (agent-uploads.ts).
 */
async function storeToS3<R>(
  args: SnapshotArgs,
  to: Extract<Destination, { kind: 's3' }>,
  chunks: AsyncIterable<Buffer>,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  check: (readBack: () => Promise<void>) => Promise<R>,
): Promise<StoredObject & R & ReturnType<typeof tidyReport>> {
  const s3 = clientFor(to, env);
  try {
    const before = await tidyUploads(s3, to, { signal });
    const stored = await uploadStream(s3, to, chunks, { signal, progress: uploadFailpoints });
    const recorded = await check(() => verifyObject(s3, to, stored, { signal }));
    const olderThanMs = args.sweepOlderThanMs;
    const after = await tidyUploads(s3, to, { signal, ...(olderThanMs !== undefined ? { olderThanMs } : {}) });
    return { ...stored, ...recorded, ...tidyReport(before, after) };
  } finally {
    s3.destroy();
  }
}

/** Streams the snapshot to its destination and checks it there. */
export async function takeSnapshot(args: SnapshotArgs, env: NodeJS.ProcessEnv): Promise<SnapshotReport> {
  // SIGTERM (the Pod deleted with its EtcdSnapshot, or the Job past its deadline) stops the run
  // as its timeout does: the upload is aborted, not left for the store to keep.
  const stop = new AbortController();
  const stopped = new Error('stopped by SIGTERM (the Pod is being deleted)');
  const onTerm = () => stop.abort(stopped);
  process.once('SIGTERM', onTerm);
  try {
    return await snapshotUntil(args, env, AbortSignal.any([AbortSignal.timeout(args.timeoutMs), stop.signal]));
  } catch (err) {
    // What failed first (etcd's stream, or S3) says only that it was cancelled.
    throw stop.signal.aborted ? new Error(stopped.message, { cause: err }) : err;
  } finally {
    process.off('SIGTERM', onTerm);
  }
}

/** takeSnapshot, under one signal for its timeout and its stop. */
async function snapshotUntil(args: SnapshotArgs, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<SnapshotReport> {
  const tls = args.tls;
  const etcd = new Etcd3({
    hosts: [args.endpoint],
    dialTimeout: 10_000,
    grpcOptions: snapshotGrpcOptions,
    ...(tls
      ? {
          credentials: {
            rootCertificate: readFileSync(tls.cacert),
            certChain: readFileSync(tls.cert),
            privateKey: readFileSync(tls.key),
          },
        }
      : {}),
  });
  try {
    const info: SnapshotInfo = { bytes: 0 };
    const chunks = readSnapshot(etcd, info, signal);
    const to = args.to;
    // Recorded once stored, at the revision the snapshot holds: what a restore of it is checked against.
    // A record that fails (the member compacted past it meanwhile) or does not answer within
    // RECORD_MS leaves a stored snapshot that cannot be verified, not a failed or a hung one.
    const recorded = async () => {
      const base = { revision: info.revision ?? 0, etcdVersion: info.etcdVersion ?? '' };
      try {
        const { hashKV, compactRevision, keys } = await withDeadline(measureAt(etcd, base.revision), RECORD_MS);
        return { ...base, hashKV, compactRevision, keys };
      } catch (err) {
        return { ...base, notRecorded: (err as Error).message };
      }
    };
    const start = sinceStart();
    let storedAt = start;
    // Once stored, the read-back and the record run together: neither needs the other, and the
    // record comes sooner after the snapshot, leaving a compaction less time to pass its revision.
    const check = async (readBack: () => Promise<void>) => {
      storedAt = sinceStart();
      const [record] = await Promise.all([recorded(), readBack()]);
      return record;
    };
    const seconds = (): RunSeconds => {
      const total = sinceStart();
      return { start, store: round(storedAt - start), check: round(total - storedAt), total };
    };
    if (to.kind === 'file') {
      mkdirSync(dirname(to.path), { recursive: true });
      const stored = await writeFileStream(to.path, chunks);
      const record = await check(() => verifyFile(to.path, stored));
      return { location: to.path, ...stored, ...record, seconds: seconds() };
    }
    const { size, sha256, ...rest } = await storeToS3(args, to, chunks, env, signal, check);
    return { location: `s3://${to.bucket}/${to.key}`, size, sha256, ...rest, seconds: seconds() };
  } finally {
    etcd.close();
  }
}

/** What `fetch-snapshot` is asked: where the snapshot is, what it must hash to, where it goes. */
