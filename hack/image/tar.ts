/**
 * A tar writer whose output depends only on the entries given: ustar headers (PAX records for
 * paths past ustar's 100 bytes), the caller's owners, modes and one mtime, entries written in
 * the order given. With the same entries it writes the same bytes on any machine, which is what
 * makes an image layer's digest reproducible.
 */
import { createReadStream } from 'node:fs';

/** One entry of a layer: where it lands in the image, what it is, and who owns it. */
export type TarEntry = {
  /** The path inside the image, relative, without a leading slash (`usr/local/bin/node`). */
  readonly path: string;
  readonly mode: number;
  readonly uid?: number;
  readonly gid?: number;
} & (
  | { readonly type: 'dir' }
  | { readonly type: 'symlink'; readonly target: string }
  | { readonly type: 'file'; readonly size: number; readonly source: string }
  | { readonly type: 'file'; readonly content: Buffer }
);

const BLOCK = 512;

/** The tar stream of the entries, every one stamped with mtime (seconds since the epoch). */
export async function* tarStream(entries: readonly TarEntry[], mtime: number): AsyncGenerator<Buffer> {
  for (const e of entries) {
    const name = e.type === 'dir' ? `${e.path}/` : e.path;
    const size = e.type !== 'file' ? 0 : 'content' in e ? e.content.length : e.size;
    const link = e.type === 'symlink' ? e.target : '';
    const pax: string[] = [];
    if (Buffer.byteLength(name) > 100) pax.push(paxRecord('path', name));
    if (Buffer.byteLength(link) > 100) pax.push(paxRecord('linkpath', link));
    if (pax.length > 0) {
      const body = Buffer.from(pax.join(''));
      yield header({ name: 'PaxHeader', mode: 0o644, size: body.length, mtime, type: 'x' });
      yield padded(body);
    }
    const type = e.type === 'dir' ? '5' : e.type === 'symlink' ? '2' : '0';
    yield header({ name, mode: e.mode, uid: e.uid, gid: e.gid, size, mtime, type, link });
    if (e.type !== 'file') continue;
    if ('content' in e) {
      yield padded(e.content);
      continue;
    }
    let read = 0;
    for await (const chunk of createReadStream(e.source)) {
      read += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    if (read !== size) throw new Error(`${e.source} changed while it was written (${read} bytes, expected ${size})`);
    if (size % BLOCK !== 0) yield Buffer.alloc(BLOCK - (size % BLOCK));
  }
  yield Buffer.alloc(2 * BLOCK);
}

/** A PAX record: "LEN KEY=VALUE\n", LEN counting itself. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  const base = Buffer.byteLength(rest);
  let len = base + String(base).length;
  if (String(len).length > String(base).length) len = base + String(len).length;
  return `${len}${rest}`;
}

function padded(body: Buffer): Buffer {
  const rem = body.length % BLOCK;
  return rem === 0 ? body : Buffer.concat([body, Buffer.alloc(BLOCK - rem)]);
}

interface Header {
  readonly name: string;
  readonly mode: number;
  readonly uid?: number;
  readonly gid?: number;
  readonly size: number;
  readonly mtime: number;
  readonly type: string;
  readonly link?: string;
}

function header(h: Header): Buffer {
  const b = Buffer.alloc(BLOCK);
  // Past 100 bytes the name is in the PAX record; the ustar field keeps its first bytes.
  b.write(h.name, 0, 100, 'utf8');
  octal(b, 100, 8, h.mode & 0o7777);
  octal(b, 108, 8, h.uid ?? 0);
  octal(b, 116, 8, h.gid ?? 0);
  octal(b, 124, 12, h.size);
  octal(b, 136, 12, h.mtime);
  b.fill(0x20, 148, 156);
  b.write(h.type, 156, 'ascii');
  b.write(h.link ?? '', 157, 100, 'utf8');
  b.write('ustar\u000000', 257, 'binary');
  let sum = 0;
  for (const byte of b) sum += byte;
  b.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 'binary');
  return b;
}

function octal(b: Buffer, offset: number, width: number, value: number): void {
  const s = value.toString(8).padStart(width - 1, '0');
  if (s.length > width - 1) throw new Error(`tar: ${value} does not fit a ${width}-byte field`);
  b.write(`${s}\u0000`, offset, 'ascii');
}
