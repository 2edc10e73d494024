import { createCipheriv, createHash } from 'node:crypto';
import { HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectMismatchError } from '../../../effects/digest.ts';
import {
  readObject,
  s3Client,
  uploadMemory,
  uploadStream,
  verifyObject,
  type UploadProgress,
} from '../../../effects/s3/index.ts';
import { LocalS3 } from './local-s3.ts';

const MiB = 1024 * 1024;

/** `total` pseudo-random bytes (AES-CTR of zeros) in chunks of an odd size, so parts never line up with chunks. */
function* bytes(total: number, failAfter?: number): Generator<Buffer> {
  const stream = createCipheriv('aes-256-ctr', createHash('sha256').update(String(total)).digest(), Buffer.alloc(16));
  for (let sent = 0; sent < total;) {
    if (failAfter !== undefined && sent >= failAfter) throw new Error('source failed mid-stream');
    const n = Math.min(100_003, total - sent);
    sent += n;
    yield stream.update(Buffer.alloc(n));
  }
}

function digest(chunks: Iterable<Buffer>): { size: number; sha256: string } {
  const hash = createHash('sha256');
  let size = 0;
  for (const c of chunks) {
    hash.update(c);
    size += c.length;
  }
  return { size, sha256: hash.digest('hex') };
}

describe('S3 uploads against a real S3-compatible server (versitygw)', { timeout: 120_000 }, () => {
  const s3 = new LocalS3();
  beforeAll(() => s3.start(), 120_000);
  afterAll(() => s3.stop());
  const at = (key: string) => ({ bucket: s3.bucket, key });
  const leftUploads = async () =>
    (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: s3.bucket }))).Uploads ?? [];
  const exists = (key: string) =>
    s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key })).then(
      () => true,
      (err: { name?: string }) => (err.name === 'NotFound' ? false : Promise.reject(err as Error)),
    );

  it('stores a stream of several parts whole, with the sha256 of its bytes, and reads back the same', async () => {
    const total = 21 * MiB + 12_345;
    const stored = await uploadStream(s3.client, at('big'), bytes(total), { partSize: 5 * MiB });
    expect(stored).toEqual(digest(bytes(total)));
    expect(await readObject(s3.client, at('big'))).toEqual(stored);
    await verifyObject(s3.client, at('big'), stored);
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: 'big' }));
    expect(head.ContentLength).toBe(total);
    expect(await leftUploads()).toEqual([]);
  });

  it('a source that fails mid-stream leaves no object and no unfinished upload behind', async () => {
    const err = await uploadStream(s3.client, at('broken'), bytes(20 * MiB, 12 * MiB), { partSize: 5 * MiB }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).message).toBe('source failed mid-stream');
    expect(await exists('broken')).toBe(false);
    expect(await leftUploads()).toEqual([]);
  });

  it('an empty stream is refused and leaves nothing behind', async () => {
    const err = await uploadStream(s3.client, at('empty'), bytes(0)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectMismatchError);
    expect(await exists('empty')).toBe(false);
    expect(await leftUploads()).toEqual([]);
  });

  it('verifyObject refuses an object that is not what was uploaded, saying both', async () => {
    const stored = await uploadStream(s3.client, at('replaced'), bytes(MiB));
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'replaced', Body: Buffer.from('other') }));
    const err = await verifyObject(s3.client, at('replaced'), stored).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectMismatchError);
    expect((err as Error).message).toContain(`holds 5 bytes`);
    expect((err as Error).message).toContain(`not the ${MiB} bytes with sha256 ${stored.sha256} that were written`);
  });

  /** A client of its own that counts the UploadPart requests going at once, and can fail one. */
  function countingClient(failPart?: number) {
    const client = s3Client(s3.endpoint);
    const seen = { going: 0, most: 0 };
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'UploadPartCommand') return next(args);
        const input = args.input as { PartNumber?: number };
        if (input.PartNumber === failPart) throw new Error(`part ${failPart} refused`);
        seen.most = Math.max(seen.most, ++seen.going);
        try {
          return await next(args);
        } finally {
          seen.going--;
        }
      },
      { step: 'initialize', name: 'countParts' },
    );
    return { client, seen };
  }

  it('parts go up several at once, and the source is read no further ahead than those and the one filling', async () => {
    const { client, seen } = countingClient();
    const [partSize, partsInFlight] = [5 * MiB, 3];
    let [read, stored, ahead] = [0, 0, 0];
    function* watched(): Generator<Buffer> {
      for (const c of bytes(40 * MiB)) {
        read += c.length;
        ahead = Math.max(ahead, read - stored * partSize);
        yield c;
      }
    }
    const progress = (p: UploadProgress) => void (p.step === 'part' && stored++);
    const got = await uploadStream(client, at('parallel'), watched(), { partSize, partsInFlight, progress });
    client.destroy();
    expect(got).toEqual(digest(bytes(40 * MiB)));
    expect(await readObject(s3.client, at('parallel'))).toEqual(got);
    expect(seen.most).toBe(partsInFlight);
    expect(ahead).toBeGreaterThan(partsInFlight * partSize);
    expect(ahead).toBeLessThanOrEqual(uploadMemory({ partSize, partsInFlight }));
  });

  it('a part the store refuses stops the upload: the parts going are let go, and nothing is left', async () => {
    const { client } = countingClient(3);
    const err = await uploadStream(client, at('refused'), bytes(30 * MiB), { partSize: 5 * MiB }).catch(
      (e: unknown) => e,
    );
    client.destroy();
    expect((err as Error).message).toBe('part 3 refused');
    expect(await exists('refused')).toBe(false);
    expect(await leftUploads()).toEqual([]);
  });

  it('verifyObject reads the object back in ranges and refuses one with a single byte changed', async () => {
    const total = 13 * MiB + 7;
    const stored = await uploadStream(s3.client, at('one-byte'), bytes(total), { partSize: 5 * MiB });
    await verifyObject(s3.client, at('one-byte'), stored, { rangeSize: MiB, rangesInFlight: 3 });
    const changed = Buffer.concat([...bytes(total)]);
    changed[9 * MiB + 3]! ^= 1;
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'one-byte', Body: changed }));
    const err = await verifyObject(s3.client, at('one-byte'), stored, { rangeSize: MiB, rangesInFlight: 3 }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ObjectMismatchError);
    expect((err as Error).message).toContain(`holds ${total} bytes with sha256 ${digest([changed]).sha256}`);
  });
});
