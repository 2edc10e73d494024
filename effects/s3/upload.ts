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

/** Uploads `chunks` to `at`; resolves once S3 has the whole object. Memory: one part. */
export async function uploadStream(
  s3: S3Client,
  at: ObjectLocation,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  opts: { readonly partSize?: number; readonly signal?: AbortSignal } = {},
): Promise<StoredObject> {
  const partSize = opts.partSize ?? defaultPartSize;
  const signal = opts.signal;
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: at.bucket, Key: at.key }), {
    abortSignal: signal,
  });
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

/**
 * Aborts every multipart upload under exactly this key that never completed (an agent killed
 * mid-upload leaves one: invisible as an object, but the store keeps and bills its parts).
 */
export async function abortUploads(s3: S3Client, at: ObjectLocation, signal?: AbortSignal): Promise<number> {
  let aborted = 0;
  let KeyMarker: string | undefined;
  let UploadIdMarker: string | undefined;
  for (;;) {
    const page = await s3.send(
      new ListMultipartUploadsCommand({ Bucket: at.bucket, Prefix: at.key, KeyMarker, UploadIdMarker }),
      { abortSignal: signal },
    );
    for (const u of page.Uploads ?? []) {
      if (u.Key !== at.key || !u.UploadId) continue;
      await s3.send(new AbortMultipartUploadCommand({ Bucket: at.bucket, Key: at.key, UploadId: u.UploadId }), {
        abortSignal: signal,
      });
      aborted += 1;
    }
    if (!page.IsTruncated) return aborted;
    KeyMarker = page.NextKeyMarker;
    UploadIdMarker = page.NextUploadIdMarker;
  }
}
