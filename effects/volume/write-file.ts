/**
 * Streams bytes into a file on a mounted volume (a snapshot's PVC) so that the file at `path`
 * is only ever whole: written to `path.partial`, flushed to disk, then renamed over `path`.
 */
import { closeSync, createReadStream, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { digestOf, expectStored, hashed, ObjectMismatchError, type StoredObject } from '../digest.ts';

/** Writes `chunks` to `path`; resolves with its size and sha256 once it is on disk. */
export async function writeFileStream(
  path: string,
  chunks: AsyncIterable<Buffer> | Iterable<Buffer>,
): Promise<StoredObject> {
  const partial = `${path}.partial`;
  const fd = openSync(partial, 'w', 0o600);
  const source = hashed(chunks);
  try {
    for await (const chunk of source) {
      for (let off = 0; off < chunk.length;) off += writeSync(fd, chunk, off);
    }
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(partial, { force: true });
    throw err;
  }
  closeSync(fd);
  const stored = source.stored();
  if (stored.size === 0) {
    rmSync(partial, { force: true });
    throw new ObjectMismatchError(`nothing to write to ${path}`);
  }
  renameSync(partial, path);
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir); // so the rename itself survives a crash
  } finally {
    closeSync(dir);
  }
  return stored;
}

/** Reads the file back and resolves when its size and sha256 are `expected`. */
export async function verifyFile(path: string, expected: StoredObject): Promise<void> {
  expectStored(path, await digestOf(createReadStream(path)), expected);
}
