import { describe, expect, it } from 'vitest';
import {
  snapshotStorageVersion,
  SnapshotFormatError,
  storageVersionRefusal,
  type ReadAt,
} from '../../../effects/etcd/storage-version.ts';

const PAGE = 4096;
const encoder = new TextEncoder();

/** FNV-1a, 64 bits, as bbolt checksums its meta. */
function fnv64a(bytes: Uint8Array): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const b of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(b)) * 0x100000001b3n);
  return hash;
}

/** A page header: id, flags, count, overflow. */
function header(bytes: Uint8Array, id: number, flags: number, count: number): DataView {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  v.setBigUint64(0, BigInt(id), true);
  v.setUint16(8, flags, true);
  v.setUint16(10, count, true);
  return v;
}

function metaPage(id: number, root: number, txid: number): Uint8Array {
  const p = new Uint8Array(PAGE);
  const v = header(p, id, 0x04, 0);
  v.setUint32(16, 0xed0cdaed, true);
  v.setUint32(20, 2, true);
  v.setUint32(24, PAGE, true);
  v.setBigUint64(32, BigInt(root), true);
  v.setBigUint64(64, BigInt(txid), true);
  v.setBigUint64(72, fnv64a(p.subarray(16, 72)), true);
  return p;
}

/** A leaf page of [key, value, bucket?] in key order: a page of the file, or (inline) just as long as it needs. */
function leafPage(id: number, entries: [string, Uint8Array, boolean?][], inline = false): Uint8Array {
  const keys = entries.map(([key]) => encoder.encode(key));
  const needed = 16 + entries.length * 16 + entries.reduce((n, [, value], i) => n + keys[i]!.length + value.length, 0);
  const p = new Uint8Array(inline ? needed : PAGE);
  const v = header(p, id, 0x02, entries.length);
  let data = 16 + entries.length * 16;
  entries.forEach(([, value, bucket], i) => {
    const e = 16 + i * 16;
    const k = keys[i]!;
    v.setUint32(e, bucket ? 0x01 : 0, true);
    v.setUint32(e + 4, data - e, true);
    v.setUint32(e + 8, k.length, true);
    v.setUint32(e + 12, value.length, true);
    p.set(k, data);
    p.set(value, data + k.length);
    data += k.length + value.length;
  });
  return p;
}

/** A branch page of [first key, child page]. */
function branchPage(id: number, children: [string, number][]): Uint8Array {
  const p = new Uint8Array(PAGE);
  const v = header(p, id, 0x01, children.length);
  let data = 16 + children.length * 16;
  children.forEach(([key, child], i) => {
    const e = 16 + i * 16;
    const k = encoder.encode(key);
    v.setUint32(e, data - e, true);
    v.setUint32(e + 4, k.length, true);
    v.setBigUint64(e + 8, BigInt(child), true);
    p.set(k, data);
    data += k.length;
  });
  return p;
}

/** A bucket's value: its header (root page 0: inline) and the inline leaf after it. */
function inlineBucket(entries: [string, Uint8Array][]): Uint8Array {
  const leaf = leafPage(0, entries, true);
  const value = new Uint8Array(16 + leaf.length);
  value.set(leaf, 16);
  return value;
}

/** A bucket's value whose root is page `root` of the file. */
function bucketAt(root: number): Uint8Array {
  const value = new Uint8Array(16);
  new DataView(value.buffer).setBigUint64(0, BigInt(root), true);
  return value;
}

const reader =
  (pages: Uint8Array[]): ReadAt =>
  (offset, length) => {
    const file = new Uint8Array(pages.length * PAGE);
    pages.forEach((p, i) => file.set(p, i * PAGE));
    return Promise.resolve(file.subarray(offset, offset + length));
  };

describe('the storage version of a snapshot file', () => {
  it('is found through a branch root and an inline meta bucket, by the newer of the two metas', async () => {
    // Meta 0 is older and points at a root without `meta`; meta 1 (newer) at the branch.
    const pages = [
      metaPage(0, 5, 7),
      metaPage(1, 2, 8),
      branchPage(2, [
        ['alarm', 3],
        ['lease', 4],
      ]),
      leafPage(3, [
        ['alarm', bucketAt(0), true],
        ['auth', bucketAt(0), true],
        ['key', bucketAt(0), true],
      ]),
      leafPage(4, [
        ['lease', bucketAt(0), true],
        ['members', bucketAt(0), true],
        [
          'meta',
          inlineBucket([
            ['confState', encoder.encode('{}')],
            ['consistent_index', new Uint8Array(8)],
            ['storageVersion', encoder.encode('3.7.0')],
          ]),
          true,
        ],
      ]),
      leafPage(5, [['key', bucketAt(0), true]]),
    ];
    expect(await snapshotStorageVersion(reader(pages))).toBe('3.7.0');
  });

  it('is found in a meta bucket on a page of its own', async () => {
    const pages = [
      metaPage(0, 2, 3),
      metaPage(1, 2, 2),
      leafPage(2, [
        ['key', bucketAt(0), true],
        ['meta', bucketAt(3), true],
      ]),
      leafPage(3, [
        ['finishedCompactRev', new Uint8Array(8)],
        ['storageVersion', encoder.encode('3.6.0')],
      ]),
    ];
    expect(await snapshotStorageVersion(reader(pages))).toBe('3.6.0');
  });

  it('is none when the meta bucket has no storageVersion (data of etcd 3.5)', async () => {
    const pages = [
      metaPage(0, 2, 3),
      metaPage(1, 2, 2),
      leafPage(2, [['meta', inlineBucket([['consistent_index', new Uint8Array(8)]]), true]]),
    ];
    expect(await snapshotStorageVersion(reader(pages))).toBeUndefined();
  });

  it('refuses bytes that are no bbolt database, and a meta whose checksum does not hold', async () => {
    await expect(snapshotStorageVersion(reader([new Uint8Array(PAGE)]))).rejects.toThrow(SnapshotFormatError);
    const bad = metaPage(0, 2, 3);
    bad[40]! ^= 1;
    await expect(snapshotStorageVersion(reader([bad, bad, leafPage(2, [])]))).rejects.toThrow(/no valid meta/);
  });
});

describe('which etcd can run on a storage version', () => {
  it('refuses a newer minor, naming both and the way out', () => {
    expect(storageVersionRefusal('3.7.0', '3.6.16')).toBe(
      'the snapshot holds data of storage version 3.7.0 (written by etcd 3.7), newer than etcd 3.6.16 can run ' +
        '(etcd refuses it at start: version "3.7.0" is not supported); restore it into a cluster of etcd 3.7 or later, ' +
        'or restore a snapshot taken before the upgrade to 3.7',
    );
    expect(storageVersionRefusal('3.6.0', '3.5.35')).toMatch(/storage version 3\.6\.0 .* newer than etcd 3\.5\.35/);
  });

  it('allows the same minor, an older one, and data without a storage version', () => {
    expect(storageVersionRefusal('3.7.0', '3.7.3')).toBeUndefined();
    expect(storageVersionRefusal('3.6.0', '3.7.3')).toBeUndefined();
    expect(storageVersionRefusal(undefined, '3.5.35')).toBeUndefined();
  });
});
