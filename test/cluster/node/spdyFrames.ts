/**
 * SPDY/3.1 frames as the kubelet's streaming API speaks them (moby/spdystream): encode and decode
 * of SYN_STREAM, SYN_REPLY, DATA, RST_STREAM, SETTINGS, PING, GOAWAY, HEADERS and WINDOW_UPDATE,
 * with header blocks compressed by one zlib stream per direction over the SPDY/3 dictionary.
 */
import zlib from 'node:zlib';

/** Words of the SPDY/3 header dictionary (spec section 2.6.10.1), each sent length-prefixed. */
const DICTIONARY_WORDS =
  'options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges age ' +
  'allow authorization cache-control connection content-base content-encoding content-language content-length ' +
  'content-location content-md5 content-range content-type date etag expect expires from host if-match ' +
  'if-modified-since if-none-match if-range if-unmodified-since last-modified location max-forwards pragma ' +
  'proxy-authenticate proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade ' +
  'user-agent vary via warning www-authenticate method get status 200_OK version HTTP/1.1 url public set-cookie ' +
  'keep-alive origin';
/** The dictionary's tail, sent as it is. */
const DICTIONARY_TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The SPDY/3 zlib dictionary, 1423 bytes. */
export const SPDY3_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.split(' ').map((w) => {
    const word = Buffer.from(w.replace('_', ' '));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(word.length);
    return Buffer.concat([len, word]);
  }),
  Buffer.from(DICTIONARY_TAIL),
]);

/** Header names (lower case, as SPDY/3 requires) to values; several values are joined by NUL. */
export type SpdyHeaders = Readonly<Record<string, string>>;

/** FLAG_FIN of DATA, SYN_STREAM, SYN_REPLY and HEADERS. */
export const FLAG_FIN = 0x01;
/** RST_STREAM status codes used here. */
export const RST = { PROTOCOL_ERROR: 1, INVALID_STREAM: 2, REFUSED_STREAM: 3, CANCEL: 5 } as const;

/** One decoded frame. */
export type SpdyFrame =
  | { type: 'synStream'; streamId: number; associatedId: number; priority: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'synReply'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'headers'; streamId: number; fin: boolean; headers: SpdyHeaders }
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer }
  | { type: 'rstStream'; streamId: number; status: number }
  | { type: 'settings' }
  | { type: 'ping'; id: number }
  | { type: 'goAway'; lastGoodStreamId: number; status: number }
  | { type: 'windowUpdate'; streamId: number; delta: number }
  | { type: 'unknown'; frameType: number };

const TYPE = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8, windowUpdate: 9 };
const VERSION = 3;

/** A header block was given to a compression context already closed (its connection went away). */
export class SpdyClosedError extends Error {
  override readonly name = 'SpdyClosedError';
  readonly code = 'ERR_SPDY_CLOSED';
  constructor() {
    super('the SPDY connection is closed: its header compression context is gone');
  }
}

/** Runs a zlib stream one sync-flushed block at a time, in order, keeping its context across blocks. */
class ZlibBlocks {
  readonly #z: zlib.Deflate | zlib.Inflate;
  #chain: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(z: zlib.Deflate | zlib.Inflate) {
    this.#z = z;
    z.on('error', () => undefined); // reported to the block that failed, below
  }

  /** The block's output; rejects with SpdyClosedError once closed (a closed zlib stream flushes nothing). */
  run(input: Buffer): Promise<Buffer> {
    const z = this.#z;
    const done = this.#chain.then(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          if (this.#closed) return reject(new SpdyClosedError());
          const failed = (err: Error): void => reject(err);
          z.once('error', failed);
          z.write(input);
          z.flush(zlib.constants.Z_SYNC_FLUSH, (err?: Error | null) => {
            z.off('error', failed);
            if (err) return reject(err);
            const out: Buffer[] = [];
            for (let b = z.read() as Buffer | null; b; b = z.read() as Buffer | null) out.push(b);
            resolve(Buffer.concat(out));
          });
        }),
    );
    this.#chain = done.catch(() => undefined);
    return done;
  }

  close(): void {
    this.#closed = true;
    this.#z.close();
  }
}

/** The uncompressed header block: a count, then length-prefixed names and values. */
export function headerBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [u32(Object.keys(headers).length)];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name.toLowerCase());
    const v = Buffer.from(value);
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

/** Reads an uncompressed header block; names are lower-cased. */
export function parseHeaderBlock(block: Buffer): Record<string, string> {
  const headers: Record<string, string> = {};
  if (block.length < 4) throw new RangeError('SPDY header block is truncated');
  let pos = 4;
  const take = (): Buffer => {
    if (block.length < pos + 4) throw new RangeError('SPDY header block is truncated');
    const len = block.readUInt32BE(pos);
    const out = block.subarray(pos + 4, pos + 4 + len);
    if (out.length !== len) throw new RangeError('SPDY header block is truncated');
    pos += 4 + len;
    return out;
  };
  for (let i = block.readUInt32BE(0); i > 0; i--) {
    const name = take().toString().toLowerCase();
    headers[name] = take().toString();
  }
  return headers;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

/** Encodes frames; header blocks go through this encoder's own compression context. */
export class SpdyEncoder {
  readonly #deflate = new ZlibBlocks(zlib.createDeflate({ dictionary: SPDY3_DICTIONARY, level: 9 }));

  /** The frame's bytes. Frames with headers must be encoded in the order they are sent. */
  async encode(frame: SpdyFrame): Promise<Buffer> {
    switch (frame.type) {
      case 'synStream': {
        const block = await this.#deflate.run(headerBlock(frame.headers));
        const fixed = Buffer.alloc(10);
        fixed.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
        fixed.writeUInt32BE(frame.associatedId & 0x7fffffff, 4);
        fixed.writeUInt8((frame.priority & 7) << 5, 8);
        return control(TYPE.synStream, frame.fin ? FLAG_FIN : 0, Buffer.concat([fixed, block]));
      }
      case 'synReply':
      case 'headers': {
        const block = await this.#deflate.run(headerBlock(frame.headers));
        const payload = Buffer.concat([u32(frame.streamId & 0x7fffffff), block]);
        return control(TYPE[frame.type], frame.fin ? FLAG_FIN : 0, payload);
      }
      default:
        return encodePlain(frame);
    }
  }

  close(): void {
    this.#deflate.close();
  }
}

/** Encodes a frame that carries no header block (DATA, RST_STREAM, PING, GOAWAY, WINDOW_UPDATE). */
export function encodePlain(frame: SpdyFrame): Buffer {
  switch (frame.type) {
    case 'data': {
      const head = Buffer.alloc(8);
      head.writeUInt32BE(frame.streamId & 0x7fffffff, 0);
      head.writeUInt32BE(((frame.fin ? FLAG_FIN : 0) << 24) | frame.data.length, 4);
      return Buffer.concat([head, frame.data]);
    }
    case 'rstStream':
      return control(TYPE.rstStream, 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.status)]));
    case 'ping':
      return control(TYPE.ping, 0, u32(frame.id));
    case 'goAway':
      return control(TYPE.goAway, 0, Buffer.concat([u32(frame.lastGoodStreamId & 0x7fffffff), u32(frame.status)]));
    case 'windowUpdate':
      return control(TYPE.windowUpdate, 0, Buffer.concat([u32(frame.streamId & 0x7fffffff), u32(frame.delta)]));
    case 'settings':
      return control(TYPE.settings, 0, u32(0));
    default:
      throw new TypeError(`SPDY frame ${frame.type} carries headers: use SpdyEncoder`);
  }
}

/** Splits a byte stream into frames and decodes them, header blocks through one inflate context. */
export class SpdyDecoder {
  readonly #inflate = new ZlibBlocks(zlib.createInflate({ dictionary: SPDY3_DICTIONARY }));
  #buffered: Buffer = Buffer.alloc(0);

  #chain: Promise<unknown> = Promise.resolve();

  /**
   * Takes the next bytes; resolves to the frames they complete, in order. Calls may overlap (a
   * socket's 'data' events do not wait): each waits for the one before it, so frames come out in
   * the order their bytes came in.
   */
  push(chunk: Buffer): Promise<SpdyFrame[]> {
    const done = this.#chain.then(() => this.#take(chunk));
    this.#chain = done.catch(() => undefined);
    return done;
  }

  async #take(chunk: Buffer): Promise<SpdyFrame[]> {
    this.#buffered = this.#buffered.length ? Buffer.concat([this.#buffered, chunk]) : chunk;
    const frames: SpdyFrame[] = [];
    while (this.#buffered.length >= 8) {
      const length = this.#buffered.readUInt32BE(4) & 0xffffff;
      if (this.#buffered.length < 8 + length) break;
      const raw = this.#buffered.subarray(0, 8 + length);
      this.#buffered = this.#buffered.subarray(8 + length);
      frames.push(await this.#decode(raw));
    }
    return frames;
  }

  async #decode(raw: Buffer): Promise<SpdyFrame> {
    const flags = raw.readUInt8(4);
    const fin = (flags & FLAG_FIN) !== 0;
    const payload = raw.subarray(8);
    if (!(raw.readUInt8(0) & 0x80)) {
      return { type: 'data', streamId: raw.readUInt32BE(0) & 0x7fffffff, fin, data: Buffer.from(payload) };
    }
    const id = (at: number): number => payload.readUInt32BE(at) & 0x7fffffff;
    switch (raw.readUInt16BE(2)) {
      case TYPE.synStream: {
        const headers = parseHeaderBlock(await this.#inflate.run(payload.subarray(10)));
        return { type: 'synStream', streamId: id(0), associatedId: id(4), priority: payload[8]! >> 5, fin, headers };
      }
      case TYPE.synReply:
        return {
          type: 'synReply',
          streamId: id(0),
          fin,
          headers: parseHeaderBlock(await this.#inflate.run(payload.subarray(4))),
        };
      case TYPE.headers:
        return {
          type: 'headers',
          streamId: id(0),
          fin,
          headers: parseHeaderBlock(await this.#inflate.run(payload.subarray(4))),
        };
      case TYPE.rstStream:
        return { type: 'rstStream', streamId: id(0), status: payload.readUInt32BE(4) };
      case TYPE.settings:
        return { type: 'settings' };
      case TYPE.ping:
        return { type: 'ping', id: payload.readUInt32BE(0) };
      case TYPE.goAway:
        return { type: 'goAway', lastGoodStreamId: id(0), status: payload.length >= 8 ? payload.readUInt32BE(4) : 0 };
      case TYPE.windowUpdate:
        return { type: 'windowUpdate', streamId: id(0), delta: payload.readUInt32BE(4) & 0x7fffffff };
      default:
        return { type: 'unknown', frameType: raw.readUInt16BE(2) };
    }
  }

  close(): void {
    this.#inflate.close();
  }
}
