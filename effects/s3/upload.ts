/**
 * Streams bytes of unknown length into one S3 object as a multipart upload, one part in memory
 * at a time, computing the sha256 of the whole as it goes; and reads an object back to check it.
 * A failed upload is aborted, so no half-written object is ever listed.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Digest, digestOf, expectStored, ObjectMismatchError, type StoredObject } from '../digest.ts';

/** Where an object lives. */
export interface ObjectLocation {
  readonly bucket: string;
  readonly key: string;
}

/** S3's smallest part but the last is 5 MiB; 8 MiB keeps the part count low for large snapshots. */
export const defaultPartSize = 8 * 1024 * 1024;

/** Where an upload stands, told as it gets there: begun, part n stored, completed. */
export type UploadProgress =
  { readonly step: 'created' } | { readonly step: 'part'; readonly part: number } | { readonly step: 'completed' };

/** Options of uploadStream. */
export interface UploadOptions {
  readonly partSize?: number;
  readonly signal?: AbortSignal;
  /** Called at each boundary of the upload (the agent's failpoints hang there). */
  readonly progress?: (p: UploadProgress) => void;
}

/** Uploads `chunks` to `at`; resolves once S3 has the whole object. Memory: one part. */
export async function uploadStream(
  s3: S3Client,
  at: ObjectLocation,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  opts: UploadOptions = {},
): Promise<StoredObject> {
  const partSize = opts.partSize ?? defaultPartSize;
  const signal = opts.signal;
  const progress = opts.progress ?? (() => undefined);
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: at.bucket, Key: at.key }), {
    abortSignal: signal,
  });
  progress({ step: 'created' });
  const digest = new Digest();
  const parts: CompletedPart[] = [];
  const part = Buffer.allocUnsafe(partSize);
  let filled = 0;
  const flush = async (): Promise<void> => {
    const PartNumber = parts.length + 1;
    const body = part.subarray(0, filled);
    const { ETag } = await s3.send(
      new UploadPartCommand({ Bucket: at.bucket, Key: at.key, UploadId, PartNumber, Body: body }),
      { abortSignal: signal },
    );
    parts.push({ ETag, PartNumber });
    filled = 0;
    progress({ step: 'part', part: PartNumber });
  };
  try {
    for await (const chunk of chunks) {
      digest.add(chunk);
      for (let offset = 0; offset < chunk.length;) {
        const n = chunk.copy(part, filled, offset, Math.min(chunk.length, offset + partSize - filled));
        filled += n;
        offset += n;
        if (filled === partSize) await flush();
      }
    }
    if (filled > 0) await flush();
    if (parts.length === 0) throw new ObjectMismatchError(`nothing to upload to s3://${at.bucket}/${at.key}`);
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: at.bucket,
        Key: at.key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
      { abortSignal: signal },
    );
  } catch (err) {
    // Not under the caller's signal: an aborted upload must still be cleaned up.
    await s3.send(new AbortMultipartUploadCommand({ Bucket: at.bucket, Key: at.key, UploadId })).catch(() => undefined);
    throw err;
  }
  progress({ step: 'completed' });
  return digest.result();
}

/** Reads the object back, streaming, and resolves when its size and sha256 are `expected`. */
export async function verifyObject(
  s3: S3Client,
  at: ObjectLocation,
  expected: StoredObject,
  signal?: AbortSignal,
): Promise<void> {
  expectStored(`s3://${at.bucket}/${at.key}`, await readObject(s3, at, signal), expected);
}

/** The size and sha256 of an object, read as a stream. */
export async function readObject(s3: S3Client, at: ObjectLocation, signal?: AbortSignal): Promise<StoredObject> {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.key }), { abortSignal: signal });
  return digestOf(Body as AsyncIterable<Uint8Array>);
}

/** An upload that was begun and never completed nor aborted. */
export interface OpenUpload {
  readonly key: string;
  readonly uploadId: string;
  /** When the store says it was begun. */
  readonly initiated?: Date;
}

/** Every upload under `prefix` that was begun and never completed nor aborted, page by page. */
export async function* openUploads(
  s3: S3Client,
  bucket: string,
  prefix: string,
  signal?: AbortSignal,
): AsyncGenerator<OpenUpload> {
  let KeyMarker: string | undefined;
  let UploadIdMarker: string | undefined;
  for (;;) {
    const page = await s3.send(
      new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, KeyMarker, UploadIdMarker }),
      { abortSignal: signal },
    );
    for (const u of page.Uploads ?? []) {
      if (u.Key === undefined || !u.UploadId) continue;
      yield { key: u.Key, uploadId: u.UploadId, ...(u.Initiated ? { initiated: u.Initiated } : {}) };
    }
    if (!page.IsTruncated) return;
    KeyMarker = page.NextKeyMarker;
    UploadIdMarker = page.NextUploadIdMarker;
  }
}

/** Aborts the uploads under `prefix` that `which` picks; resolves with the keys of those aborted. */
export async function abortOpenUploads(
  s3: S3Client,
  bucket: string,
  prefix: string,
  which: (u: OpenUpload) => boolean,
  signal?: AbortSignal,
): Promise<string[]> {
  // Listed whole first: aborting while paging could move the markers under the listing.
  const picked: OpenUpload[] = [];
  for await (const u of openUploads(s3, bucket, prefix, signal)) if (which(u)) picked.push(u);
  for (const u of picked)
    await s3
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.key, UploadId: u.uploadId }), {
        abortSignal: signal,
      })
      .catch((err: unknown) => {
        // Aborted or completed meanwhile (by the run it belonged to): nothing is left to abort.
        if ((err as { name?: string }).name !== 'NoSuchUpload') throw err;
      });
  return picked.map((u) => u.key);
}

/**
 * Aborts every multipart upload under exactly this key that never completed (an agent killed
 * mid-upload leaves one: invisible as an object, but the store keeps and bills its parts).
 */
export async function abortUploads(s3: S3Client, at: ObjectLocation, signal?: AbortSignal): Promise<number> {
  return (await abortOpenUploads(s3, at.bucket, at.key, (u) => u.key === at.key, signal)).length;
}
