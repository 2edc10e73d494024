/**
 * Reading a stored object back to check it. The object is asked for in ranges, several at once,
 * and hashed in order as they arrive: the same check as one streamed GET (every byte the store
 * serves, its size and sha256 against what was written), without one response's round trip and
 * the store's reads waiting on the hashing.
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Digest, digestOf, expectStored, type StoredObject } from '../digest.ts';
import type { ObjectLocation } from './upload.ts';

/** The bytes asked for in one range request. */
export const defaultRangeSize = 8 * 1024 * 1024;

/** Range requests going at once; memory is this many ranges (32 MiB), whatever the object's size. */
export const defaultRangesInFlight = 4;

/** Options of verifyObject. */
export interface ReadBackOptions {
  readonly signal?: AbortSignal;
  readonly rangeSize?: number;
  readonly rangesInFlight?: number;
}

/** Reads the object back and resolves when its size and sha256 are `expected`. */
export async function verifyObject(
  s3: S3Client,
  at: ObjectLocation,
  expected: StoredObject,
  opts: ReadBackOptions = {},
): Promise<void> {
  const got =
    expected.size === 0 ? await readObject(s3, at, opts.signal) : await readRanges(s3, at, expected.size, opts);
  expectStored(`s3://${at.bucket}/${at.key}`, got, expected);
}

/** The size and sha256 of an object, read as one stream. */
export async function readObject(s3: S3Client, at: ObjectLocation, signal?: AbortSignal): Promise<StoredObject> {
  const { Body } = await s3.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.key }), { abortSignal: signal });
  return digestOf(Body as AsyncIterable<Uint8Array>);
}

/** One range as it came: the object's whole size as the store told it, and the bytes. */
interface Range {
  readonly total: number;
  readonly chunks: Uint8Array[];
}

/**
 * The size and sha256 of an object that should hold `size` bytes, read in ranges. An object of
 * another size (replaced, cut short) is read again whole, to say what it holds.
 */
async function readRanges(
  s3: S3Client,
  at: ObjectLocation,
  size: number,
  opts: ReadBackOptions,
): Promise<StoredObject> {
  const rangeSize = opts.rangeSize ?? defaultRangeSize;
  const inFlight = Math.max(1, opts.rangesInFlight ?? defaultRangesInFlight);
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const fetch = async (first: number): Promise<Range> => {
    const Range = `bytes=${first}-${Math.min(size, first + rangeSize) - 1}`;
    try {
      const got = await s3.send(new GetObjectCommand({ Bucket: at.bucket, Key: at.key, Range }), {
        abortSignal: signal,
      });
      const chunks: Uint8Array[] = [];
      for await (const chunk of got.Body as AsyncIterable<Uint8Array>) chunks.push(chunk);
      return { total: Number(got.ContentRange?.split('/')[1] ?? Number.NaN), chunks };
    } catch (err) {
      // A range past the end of an object shorter than expected.
      if ((err as { name?: string }).name === 'InvalidRange') return { total: Number.NaN, chunks: [] };
      throw err;
    }
  };
  const pending: Promise<Range>[] = [];
  const digest = new Digest();
  let next = 0;
  try {
    while (next < size || pending.length > 0) {
      for (; pending.length < inFlight && next < size; next += rangeSize) {
        const range = fetch(next);
        range.catch(() => undefined); // awaited in its turn; not unhandled meanwhile
        pending.push(range);
      }
      const { total, chunks } = await pending.shift()!;
      if (total !== size) return await readObject(s3, at, opts.signal);
      for (const chunk of chunks) digest.add(chunk);
    }
    return digest.result();
  } finally {
    stop.abort(); // ranges still going after a mismatch or a failure are not waited out
  }
}
