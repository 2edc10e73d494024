/**
 * `etcd-operator agent snapshot`: run by a snapshot Job from the operator image. It streams one
 * member's snapshot to S3 or to a file on a mounted volume, reads it back to check it, and
 * reports what it stored as one JSON line, on stdout and as the container's termination message
 * (where the operator reads it from the Pod's status). The manager never holds the bytes, nor
 * the S3 credentials: the Job's Pod gets those from their Secret as environment variables.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import type { StoredObject } from '../effects/digest.ts';
import { readSnapshot, type SnapshotInfo } from '../effects/etcd/snapshot.ts';
import { abortUploads, s3Client, uploadStream, verifyObject } from '../effects/s3/index.ts';
import { verifyFile, writeFileStream } from '../effects/volume/write-file.ts';

/** What a snapshot run stored, as printed. */
export interface SnapshotReport extends StoredObject {
  /** `s3://bucket/key` or the file's path. */
  readonly location: string;
  readonly revision: number;
  readonly etcdVersion: string;
}

type Destination =
  | {
      readonly kind: 's3';
      readonly bucket: string;
      readonly key: string;
      readonly endpoint?: string;
      readonly region?: string;
      readonly forcePathStyle: boolean;
    }
  | { readonly kind: 'file'; readonly path: string };

interface SnapshotArgs {
  readonly endpoint: string;
  readonly to: Destination;
  readonly timeoutMs: number;
}

const destinationOptions = {
  's3-bucket': { type: 'string' },
  's3-key': { type: 'string' },
  's3-endpoint': { type: 'string' },
  's3-region': { type: 'string' },
  's3-force-path-style': { type: 'boolean', default: false },
  file: { type: 'string' },
} as const;

type DestinationValues = {
  readonly 's3-bucket'?: string | undefined;
  readonly 's3-key'?: string | undefined;
  readonly 's3-endpoint'?: string | undefined;
  readonly 's3-region'?: string | undefined;
  readonly 's3-force-path-style'?: boolean | undefined;
  readonly file?: string | undefined;
};

/** The one destination the arguments name; throws a TypeError that says what is wrong. */
function destinationOf(command: string, values: DestinationValues): Destination {
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
    options: { endpoint: { type: 'string' }, timeout: { type: 'string', default: '3600' }, ...destinationOptions },
    strict: true,
    allowPositionals: false,
  });
  if (!values.endpoint) throw new TypeError('snapshot needs --endpoint URL (the etcd member to take it from)');
  const to = destinationOf('snapshot', values);
  const timeout = Number(values.timeout);
  if (!Number.isInteger(timeout) || timeout <= 0)
    throw new TypeError(`--timeout must be a whole number of seconds, not '${values.timeout}'`);
  return { endpoint: values.endpoint, to, timeoutMs: timeout * 1000 };
}

/** Parses the arguments of `delete-snapshot`; throws a TypeError that says what is wrong. */
export function parseDeleteArgs(argv: readonly string[]): Destination {
  const { values } = parseArgs({ args: [...argv], options: destinationOptions, strict: true, allowPositionals: false });
  return destinationOf('delete-snapshot', values);
}

/** The S3 client of a destination, with the credentials from the environment. */
function clientFor(to: Extract<Destination, { kind: 's3' }>, env: NodeJS.ProcessEnv): S3Client {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  if (!accessKeyId || !secretAccessKey) throw new TypeError('S3 needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set');
  return s3Client({ ...to, accessKeyId, secretAccessKey });
}

/**
 * Deletes a stored snapshot and whatever an interrupted run left: S3 uploads never completed
 * under its key, or the file's `.partial`. Deleting what is not there is done, not an error.
 */
export async function deleteSnapshot(to: Destination, env: NodeJS.ProcessEnv): Promise<{ deleted: string }> {
  if (to.kind === 'file') {
    rmSync(`${to.path}.partial`, { force: true });
    rmSync(to.path, { force: true });
    return { deleted: to.path };
  }
  const s3 = clientFor(to, env);
  try {
    await abortUploads(s3, to);
    await s3.send(new DeleteObjectCommand({ Bucket: to.bucket, Key: to.key }));
    return { deleted: `s3://${to.bucket}/${to.key}` };
  } finally {
    s3.destroy();
  }
}

/** Streams the snapshot to its destination and checks it there. */
export async function takeSnapshot(args: SnapshotArgs, env: NodeJS.ProcessEnv): Promise<SnapshotReport> {
  const signal = AbortSignal.timeout(args.timeoutMs);
  const etcd = new Etcd3({ hosts: [args.endpoint], dialTimeout: 10_000 });
  try {
    const info: SnapshotInfo = { bytes: 0 };
    const chunks = readSnapshot(etcd, info, signal);
    const to = args.to;
    let stored: StoredObject;
    let location: string;
    if (to.kind === 'file') {
      location = to.path;
      mkdirSync(dirname(to.path), { recursive: true });
      stored = await writeFileStream(to.path, chunks);
      await verifyFile(to.path, stored);
    } else {
      const s3 = clientFor(to, env);
      try {
        location = `s3://${to.bucket}/${to.key}`;
        stored = await uploadStream(s3, to, chunks, { signal });
        await verifyObject(s3, to, stored, signal);
      } finally {
        s3.destroy();
      }
    }
    return { location, ...stored, revision: info.revision ?? 0, etcdVersion: info.etcdVersion ?? '' };
  } finally {
    etcd.close();
  }
}
