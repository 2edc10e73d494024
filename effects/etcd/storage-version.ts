/**
 * The storage version a snapshot holds, read from its bbolt file: etcd 3.6 and later write it
 * under the key `storageVersion` of the bucket `meta` (`3.6.0`, `3.7.0`: the minor of the
 * cluster version the data was last written at), and refuse at start data whose storage version
 * is newer than their own minor (`version "3.7.0" is not supported`). Data of 3.5 has none.
 *
 * Only the pages on the way are read (the two meta pages, the root bucket's pages down to `meta`,
 * and those of `meta`), through a function that reads bytes at an offset: a file, or ranged GETs.
 * bbolt lays out its structures in the machine's byte order; etcd's releases are little-endian.
 */

/** Reads `length` bytes at `offset` (fewer only at the end of the file). */
export type ReadAt = (offset: number, length: number) => Promise<Uint8Array>;

/** A file that is not the bbolt database of an etcd snapshot, or is cut short. */
export class SnapshotFormatError extends Error {
  override readonly name = 'SnapshotFormatError';
  readonly code = 'ERR_SNAPSHOT_FORMAT';
}

const MAGIC = 0xed0cdaed;
const PAGE_HEADER = 16;
const ELEMENT = 16;
const BRANCH = 0x01;
const LEAF = 0x02;
const META = 0x04;
const BUCKET_LEAF = 0x01;
/** bbolt's meta: magic, version, pageSize, flags, root {pgid, sequence}, freelist, pgid, txid, checksum. */
const META_SIZE = 64;
const encoder = new TextEncoder();
const META_BUCKET = encoder.encode('meta');
const STORAGE_VERSION = encoder.encode('storageVersion');

/** A page, as bytes of its own (a page of the file, or one held inline in a bucket's value). */
interface Page {
  readonly bytes: Uint8Array;
  readonly view: DataView;
}

const pageOf = (bytes: Uint8Array): Page => ({
  bytes,
  view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
});

/**
 * The storage version of the snapshot `read` reads (`3.7.0`), or undefined when it has none
 * (data of etcd 3.5). Throws SnapshotFormatError when the bytes are not a bbolt database.
 */
export async function snapshotStorageVersion(read: ReadAt): Promise<string | undefined> {
  const head = await read(0, 4096);
  const first = metaOf(pageOf(head));
  if (!first) throw new SnapshotFormatError('not a bbolt database: its first page has no valid meta');
  const pageSize = first.pageSize;
  const second = metaOf(pageOf(await read(pageSize, pageSize)));
  const meta = second && second.txid > first.txid ? second : first;
  const pageAt = async (id: bigint): Promise<Page> => {
    const at = Number(id) * pageSize;
    const header = pageOf(await read(at, pageSize));
    if (header.bytes.length < PAGE_HEADER) throw new SnapshotFormatError(`page ${id} is past the end of the file`);
    const overflow = header.view.getUint32(12, true);
    return overflow === 0 ? header : pageOf(await read(at, (overflow + 1) * pageSize));
  };
  const metaBucket = await lookup(pageAt, await pageAt(meta.root), META_BUCKET);
  if (!metaBucket || !metaBucket.bucket) return undefined;
  const value = await lookup(pageAt, await bucketRoot(pageAt, metaBucket.value), STORAGE_VERSION);
  if (!value || value.bucket) return undefined;
  return new TextDecoder().decode(value.value);
}

/** The meta of a meta page, when its magic and checksum hold. */
function metaOf(page: Page): { pageSize: number; root: bigint; txid: bigint } | undefined {
  if (page.bytes.length < PAGE_HEADER + META_SIZE) return undefined;
  const v = page.view;
  if ((v.getUint16(8, true) & META) === 0) return undefined;
  const m = PAGE_HEADER;
  if (v.getUint32(m, true) !== MAGIC) return undefined;
  if (fnv64a(page.bytes.subarray(m, m + 56)) !== v.getBigUint64(m + 56, true)) return undefined;
  return { pageSize: v.getUint32(m + 8, true), root: v.getBigUint64(m + 16, true), txid: v.getBigUint64(m + 48, true) };
}

/** The root page of a bucket from its value: a page of the file, or the page held inline after its header. */
async function bucketRoot(pageAt: (id: bigint) => Promise<Page>, value: Uint8Array): Promise<Page> {
  if (value.length < 16) throw new SnapshotFormatError('a bucket value shorter than its header');
  const root = new DataView(value.buffer, value.byteOffset, value.byteLength).getBigUint64(0, true);
  return root === 0n ? pageOf(value.subarray(16)) : pageAt(root);
}

/** The value of `key` in the tree whose root is `page`, and whether it is a bucket; undefined when absent. */
async function lookup(
  pageAt: (id: bigint) => Promise<Page>,
  page: Page,
  key: Uint8Array,
): Promise<{ value: Uint8Array; bucket: boolean } | undefined> {
  for (let depth = 0; depth < 64; depth++) {
    const flags = page.view.getUint16(8, true);
    const count = page.view.getUint16(10, true);
    if (flags & LEAF) {
      for (let i = 0; i < count; i++) {
        const e = PAGE_HEADER + i * ELEMENT;
        const pos = page.view.getUint32(e + 4, true);
        const ksize = page.view.getUint32(e + 8, true);
        const vsize = page.view.getUint32(e + 12, true);
        const k = page.bytes.subarray(e + pos, e + pos + ksize);
        if (compare(k, key) !== 0) continue;
        const value = page.bytes.subarray(e + pos + ksize, e + pos + ksize + vsize);
        return { value, bucket: (page.view.getUint32(e, true) & BUCKET_LEAF) !== 0 };
      }
      return undefined;
    }
    if (!(flags & BRANCH) || count === 0) throw new SnapshotFormatError(`a page of flags ${flags} inside a tree`);
    // The last child whose first key is at most `key`.
    let child = page.view.getBigUint64(PAGE_HEADER + 8, true);
    for (let i = 0; i < count; i++) {
      const e = PAGE_HEADER + i * ELEMENT;
      const pos = page.view.getUint32(e, true);
      const ksize = page.view.getUint32(e + 4, true);
      if (compare(page.bytes.subarray(e + pos, e + pos + ksize), key) > 0) break;
      child = page.view.getBigUint64(e + 8, true);
    }
    page = await pageAt(child);
  }
  throw new SnapshotFormatError('a tree deeper than any bbolt file holds');
}

/** Byte order of two keys, as bbolt sorts them. */
function compare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** FNV-1a, 64 bits: bbolt's checksum of a meta. */
function fnv64a(bytes: Uint8Array): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const b of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(b)) * 0x100000001b3n);
  return hash;
}

/** Major and minor of an x.y.z version, as numbers. */
const minorOf = (version: string): [number, number] => {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return [major, minor];
};

/**
 * Why etcd `version` cannot run on data of `storageVersion`, or undefined when it can: data
 * whose storage version is of a newer minor than etcd's own (etcd 3.6 and later refuse to start
 * on it; 3.5 does not look, but etcd's way down is its downgrade, which moves the storage version
 * back first).
 */
export function storageVersionRefusal(storageVersion: string | undefined, version: string): string | undefined {
  if (!storageVersion) return undefined;
  const [sMajor, sMinor] = minorOf(storageVersion);
  const [major, minor] = minorOf(version);
  if (sMajor < major || (sMajor === major && sMinor <= minor)) return undefined;
  return (
    `the snapshot holds data of storage version ${storageVersion} (written by etcd ${sMajor}.${sMinor}), ` +
    `newer than etcd ${version} can run (etcd refuses it at start: version "${storageVersion}" is not supported); ` +
    `restore it into a cluster of etcd ${sMajor}.${sMinor} or later, or restore a snapshot taken before the upgrade to ${sMajor}.${sMinor}`
  );
}
