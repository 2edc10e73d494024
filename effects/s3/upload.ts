/**
 * Streams bytes of unknown length into one S3 object as a multipart upload, several parts in
 * flight at once and a bounded number of them in memory, with the sha256 of the whole taken as
 * it goes (by the stream itself when it hashes itself, as a snapshot's does). A failed upload is
 * aborted, so no half-written object is ever listed.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { hashed, ObjectMismatchError, type StoredObject } from '../digest.ts';

/** Where an object lives. */
export interface ObjectLocation {
  readonly bucket: string;
  readonly key: string;
}

/** S3's smallest part but the last is 5 MiB; 8 MiB keeps the part count low for large snapshots. */
export const defaultPartSize = 8 * 1024 * 1024;

/**
 * Parts sent at once: enough to keep the stream from waiting on one request's round trip, few
 * enough that memory stays small (parts in flight + the one filling, times the part size: 40 MiB).
 */
export const defaultPartsInFlight = 4;

/** Where an upload stands, told as it gets there: begun, part n stored, completed. */
export type UploadProgress =
  { readonly step: 'created' } | { readonly step: 'part'; readonly part: number } | { readonly step: 'completed' };

/** Options of uploadStream. */
export interface UploadOptions {
  readonly partSize?: number;
  /** How many parts may be uploading at once (defaultPartsInFlight). */
  readonly partsInFlight?: number;
  readonly signal?: AbortSignal;
  /** Called at each boundary of the upload (the agent's failpoints hang there); parts may be stored out of order. */
  readonly progress?: (p: UploadProgress) => void;
}

/** The memory an upload's parts take at most: those in flight and the one being filled. */
export function uploadMemory(opts: Pick<UploadOptions, 'partSize' | 'partsInFlight'> = {}): number {
  return ((opts.partsInFlight ?? defaultPartsInFlight) + 1) * (opts.partSize ?? defaultPartSize);
}

/**
 * Uploads `chunks` to `at`; resolves once S3 has the whole object. A part goes up as soon as it
 * is full while the next one fills; once `partsInFlight` are going, the stream waits for one to
 * be stored, so memory is uploadMemory(opts) whatever the object's size.
 */
export async function uploadStream(
  s3: S3Client,
  at: ObjectLocation,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
  opts: UploadOptions = {},
): Promise<StoredObject> {
  const partSize = opts.partSize ?? defaultPartSize;
  const progress = opts.progress ?? (() => undefined);
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: at.bucket, Key: at.key }), {
    abortSignal: opts.signal,
  });
  progress({ step: 'created' });
  const parts = new PartSender(s3, { ...at, UploadId }, opts, progress);
  const source = hashed(chunks);
  let part: Buffer = Buffer.allocUnsafe(partSize);
  let filled = 0;
  try {
    for await (const chunk of source) {
      for (let offset = 0; offset < chunk.length;) {
        const n = chunk.copy(part, filled, offset, Math.min(chunk.length, offset + partSize - filled));
        filled += n;
        offset += n;
        if (filled < partSize) continue;
        part = await parts.send(part, filled);
        filled = 0;
      }
    }
    if (filled > 0) await parts.send(part, filled);
    const stored = await parts.stored();
    if (stored.length === 0) throw new ObjectMismatchError(`nothing to upload to s3://${at.bucket}/${at.key}`);
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: at.bucket,
        Key: at.key,
        UploadId,
        MultipartUpload: { Parts: stored },
      }),
      { abortSignal: opts.signal },
    );
  } catch (err) {
    // Every part request settled first, so none lands after the abort. Not under the caller's
    // signal: an aborted upload must still be cleaned up.
    await parts.cancel();
    await s3.send(new AbortMultipartUploadCommand({ Bucket: at.bucket, Key: at.key, UploadId })).catch(() => undefined);
    throw err;
  }
  progress({ step: 'completed' });
  return source.stored();
}

/** The parts of one upload going up, at most `partsInFlight` at a time; their buffers are reused. */
class PartSender {
  readonly #sending = new Set<Promise<void>>();
  readonly #done: CompletedPart[] = [];
  readonly #free: Buffer[] = [];
  /** Aborts the parts still going once one has failed, or the upload is given up. */
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  readonly #limit: number;
  readonly #s3: S3Client;
  readonly #upload: ObjectLocation & { readonly UploadId: string | undefined };
  readonly #progress: (p: UploadProgress) => void;
  #failed: { readonly err: unknown } | undefined;
  #next = 1;

  constructor(
    s3: S3Client,
    upload: ObjectLocation & { readonly UploadId: string | undefined },
    opts: UploadOptions,
    progress: (p: UploadProgress) => void,
  ) {
    this.#s3 = s3;
    this.#upload = upload;
    this.#progress = progress;
    this.#limit = Math.max(1, opts.partsInFlight ?? defaultPartsInFlight);
    this.#signal = opts.signal ? AbortSignal.any([opts.signal, this.#stop.signal]) : this.#stop.signal;
  }

  /**
   * Starts uploading the first `size` bytes of `buffer` as the next part; resolves, once fewer
   * than the limit are going, with a buffer to fill next. Rejects with a part's failure.
   */
  async send(buffer: Buffer, size: number): Promise<Buffer> {
    this.#throwIfFailed();
    const PartNumber = this.#next++;
    const { bucket, key, UploadId } = this.#upload;
    const command = new UploadPartCommand({
      Bucket: bucket,
      Key: key,
      UploadId,
      PartNumber,
      Body: buffer.subarray(0, size),
    });
    const going: Promise<void> = this.#s3
      .send(command, { abortSignal: this.#signal })
      .then(({ ETag }) => {
        this.#done.push({ ETag, PartNumber });
        this.#progress({ step: 'part', part: PartNumber });
      })
      .catch((err: unknown) => {
        this.#failed ??= { err };
        this.#stop.abort();
      })
      .finally(() => {
        this.#sending.delete(going);
        this.#free.push(buffer);
      });
    this.#sending.add(going);
    while (this.#sending.size >= this.#limit) await Promise.race(this.#sending);
    this.#throwIfFailed();
    return this.#free.pop() ?? Buffer.allocUnsafe(buffer.length);
  }

  /** Resolves, once every part is stored, with their list in order; rejects with a part's failure. */
  async stored(): Promise<CompletedPart[]> {
    await Promise.all(this.#sending);
    this.#throwIfFailed();
    return this.#done.sort((a, b) => a.PartNumber! - b.PartNumber!);
  }

  /** Stops the parts still going and resolves once each request has settled. */
  async cancel(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#sending);
  }

  #throwIfFailed(): void {
    if (this.#failed) throw this.#failed.err;
  }
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
