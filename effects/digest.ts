/** The size and sha256 of stored bytes (an S3 object, a file), taken as they stream past. */
import { createHash } from 'node:crypto';

/** What was stored. */
export interface StoredObject {
  readonly size: number;
  /** Hex sha256 of the bytes. */
  readonly sha256: string;
}

/** Stored bytes that are not what was written (size or sha256 differ), or nothing to store. */
export class ObjectMismatchError extends Error {
  override readonly name = 'ObjectMismatchError';
  readonly code = 'ERR_OBJECT_MISMATCH';
}

/** Adds up chunks as they pass. */
export class Digest {
  readonly #hash = createHash('sha256');
  #size = 0;

  /** Counts a chunk in. */
  add(chunk: Uint8Array): void {
    this.#hash.update(chunk);
    this.#size += chunk.length;
  }

  /** The size and sha256 of everything added; call once. */
  result(): StoredObject {
    return { size: this.#size, sha256: this.#hash.digest('hex') };
  }
}

/**
 * Chunks that hash themselves as they pass, so that whoever stores them need not hash them again:
 * `stored()` is their size and sha256 once they were read to their end.
 */
export interface HashedChunks<T extends Uint8Array = Buffer> extends AsyncIterable<T> {
  stored(): StoredObject;
}

/** `chunks`, hashed as they pass, unless they hash themselves already (a snapshot's stream). */
export function hashed<T extends Uint8Array>(chunks: AsyncIterable<T> | Iterable<T>): HashedChunks<T> {
  if ('stored' in chunks && typeof chunks.stored === 'function') return chunks as HashedChunks<T>;
  const digest = new Digest();
  let whole: StoredObject | undefined;
  return {
    async *[Symbol.asyncIterator]() {
      for await (const chunk of chunks) {
        digest.add(chunk);
        yield chunk;
      }
      whole = digest.result();
    },
    stored: () => readToEnd(whole),
  };
}

/** `whole`, once the chunks it is of were read to their end. */
export function readToEnd(whole: StoredObject | undefined): StoredObject {
  if (!whole) throw new Error('the size and sha256 of chunks not yet read to their end');
  return whole;
}

/** The size and sha256 of a stream, read to its end. */
export async function digestOf(chunks: AsyncIterable<Uint8Array>): Promise<StoredObject> {
  const source = hashed(chunks);
  for await (const _ of source);
  return source.stored();
}

/** Throws ObjectMismatchError, naming `where`, unless `got` is `expected`. */
export function expectStored(where: string, got: StoredObject, expected: StoredObject): void {
  if (got.size === expected.size && got.sha256 === expected.sha256) return;
  throw new ObjectMismatchError(
    `${where} holds ${got.size} bytes with sha256 ${got.sha256}, ` +
      `not the ${expected.size} bytes with sha256 ${expected.sha256} that were written`,
  );
}
