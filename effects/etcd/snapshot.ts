/**
 * A member's snapshot as etcd streams it: the bbolt database, then the sha256 of the database
 * (32 bytes), which etcdutl checks when it restores. The bytes pass through as they arrive, the
 * trailing hash is checked as they pass, so nothing is held whole in memory.
 */
import { createHash } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import { readToEnd, type HashedChunks, type StoredObject } from '../digest.ts';

const hashSize = 32;

/**
 * gRPC options for a client that streams a snapshot: an HTTP/2 flow-control window of 8 MiB
 * rather than grpc-js's 64 KiB, which has etcd wait for the client's window update every two
 * 32 KiB messages (the stream then runs at about half of what `etcdctl snapshot save` reads,
 * docs/performance.md). The window is also what the stream holds when its reader pauses.
 */
export const snapshotGrpcOptions = { 'grpc-node.flow_control_window': 8 * 1024 * 1024 } as const;

/** A snapshot stream that ended before its hash, or whose hash does not match its bytes. */
export class SnapshotIntegrityError extends Error {
  override readonly name = 'SnapshotIntegrityError';
  readonly code = 'ERR_SNAPSHOT_INTEGRITY';
}

/** What the stream told about the snapshot once it began. */
export interface SnapshotInfo {
  /**
   * The member's revision as the snapshot began: the snapshot holds every write up to it, and
   * may hold a few made while it began (etcd's snapshot responses carry no header to say).
   */
  revision?: number;
  /** The member's etcd version, e.g. `3.6.16`. */
  etcdVersion?: string;
  /** Bytes streamed so far, the trailing hash included. */
  bytes: number;
}

/**
 * The snapshot of the member `client` talks to, chunk by chunk; `info` is filled in as they come.
 * Throws SnapshotIntegrityError at the end when etcd's own hash does not match what was read.
 */
export function readSnapshot(client: Etcd3, info: SnapshotInfo, signal?: AbortSignal): HashedChunks {
  return withEtcdHash(streamed(client, info, signal), info);
}

/** The snapshot's bytes as etcd sends them, with `info`'s revision and version asked first. */
async function* streamed(client: Etcd3, info: SnapshotInfo, signal?: AbortSignal): AsyncGenerator<Buffer> {
  const status = await client.maintenance.status();
  info.revision = Number(status.header.revision);
  info.etcdVersion = status.version;
  const call = (await client.maintenance.snapshot()) as unknown as SnapshotCall;
  const cancel = (): void => call.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    for await (const response of call) yield response.blob;
  } finally {
    signal?.removeEventListener('abort', cancel);
    call.cancel(); // a consumer that stopped early (or failed) leaves no stream open; no-op once ended
  }
}

/** The gRPC server stream etcd3 hands out: async-iterable, and cancellable. */
interface SnapshotCall extends AsyncIterable<{ blob: Buffer }> {
  cancel(): void;
}

/**
 * Passes a stored snapshot's bytes through, checking etcd's hash at its end as they pass (what
 * etcdutl checks at restore): a snapshot damaged anywhere fails here, before anything uses it.
 * The same pass hashes the whole stream, etcd's hash included: what it is stored with.
 */
export function withEtcdHash(chunks: AsyncIterable<Uint8Array>, info: SnapshotInfo = { bytes: 0 }): HashedChunks {
  const hash = createHash('sha256');
  let whole: StoredObject | undefined;
  async function* checked(): AsyncGenerator<Buffer> {
    // The last 32 bytes seen so far, which may be etcd's hash; everything before them is database.
    let tail = Buffer.alloc(0);
    for await (const piece of chunks) {
      const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
      if (chunk.length === 0) continue;
      info.bytes += chunk.length;
      if (chunk.length >= hashSize) {
        hash.update(tail);
        hash.update(chunk.subarray(0, chunk.length - hashSize));
        tail = Buffer.from(chunk.subarray(chunk.length - hashSize));
      } else {
        const pending = Buffer.concat([tail, chunk]);
        hash.update(pending.subarray(0, Math.max(0, pending.length - hashSize)));
        tail = pending.subarray(Math.max(0, pending.length - hashSize));
      }
      yield chunk;
    }
    if (tail.length < hashSize) throw new SnapshotIntegrityError(`snapshot stream ended after ${info.bytes} bytes`);
    if (!tail.equals(hash.copy().digest())) {
      throw new SnapshotIntegrityError(`snapshot of ${info.bytes} bytes does not match the sha256 etcd sent with it`);
    }
    whole = { size: info.bytes, sha256: hash.update(tail).digest('hex') };
  }
  return { [Symbol.asyncIterator]: checked, stored: () => readToEnd(whole) };
}
