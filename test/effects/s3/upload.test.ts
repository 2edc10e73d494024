import { createHash } from 'node:crypto';
import { HeadObjectCommand, ListMultipartUploadsCommand, ListPartsCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectMismatchError } from '../../../effects/digest.ts';
import { readObject, uploadStream, verifyObject } from '../../../effects/s3/index.ts';
import { LocalS3 } from './local-s3.ts';

const MiB = 1024 * 1024;

/** `total` pseudo-random bytes in chunks of an odd size, so parts never line up with chunks. */
function* bytes(total: number, failAfter?: number): Generator<Buffer> {
  let seed = createHash('sha256').update(String(total)).digest();
  for (let sent = 0; sent < total;) {
    if (failAfter !== undefined && sent >= failAfter) throw new Error('source failed mid-stream');
    const n = Math.min(100_003, total - sent);
    const chunk = Buffer.alloc(n);
    for (let i = 0; i < n; i += 32) {
      seed = createHash('sha256').update(seed).digest();
      seed.copy(chunk, i);
    }
    sent += n;
    yield chunk;
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

  it('one part at a time: a part is uploaded before the next is read', async () => {
    // The source counts what was read when the server lists the upload's parts.
    let read = 0;
    let partsSeenAt6MiB: number | undefined;
    async function* watched(): AsyncGenerator<Buffer> {
      for (const c of bytes(8 * MiB)) {
        read += c.length;
        if (partsSeenAt6MiB === undefined && read > 6 * MiB) {
          const uploads = await leftUploads();
          const parts = await s3.client.send(
            new ListPartsCommand({ Bucket: s3.bucket, Key: 'paced', UploadId: uploads[0]!.UploadId }),
          );
          partsSeenAt6MiB = parts.Parts?.length ?? 0;
        }
        yield c;
      }
    }
    await uploadStream(s3.client, at('paced'), watched(), { partSize: 5 * MiB });
    expect(partsSeenAt6MiB).toBe(1);
  });
});
