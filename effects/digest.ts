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

/** The size and sha256 of a stream, read to its end. */
export async function digestOf(chunks: AsyncIterable<Uint8Array>): Promise<StoredObject> {
  const digest = new Digest();
  for await (const chunk of chunks) digest.add(chunk);
  return digest.result();
}

/** Throws ObjectMismatchError, naming `where`, unless `got` is `expected`. */
export function expectStored(where: string, got: StoredObject, expected: StoredObject): void {
  if (got.size === expected.size && got.sha256 === expected.sha256) return;
  throw new ObjectMismatchError(
    `${where} holds ${got.size} bytes with sha256 ${got.sha256}, ` +
      `not the ${expected.size} bytes with sha256 ${expected.sha256} that were written`,
  );
}
