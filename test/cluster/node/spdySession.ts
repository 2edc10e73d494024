/**
 * The server end of a SPDY/3.1 connection, as the kubelet's streaming server runs one: the client
 * opens every stream, each is answered with SYN_REPLY and is a Duplex (DATA in, DATA out, FIN as
 * end on either side, RST_STREAM as destroy). Pings are echoed. No flow control is enforced, as
 * spdystream (the client) neither sends WINDOW_UPDATE nor waits for one.
 */
import { Duplex } from 'node:stream';
import { encodePlain, RST, SpdyDecoder, SpdyEncoder, type SpdyFrame, type SpdyHeaders } from './spdyFrames.ts';

/** DATA frames carry at most this much, so one big write does not hold the connection long. */
const MAX_DATA = 32 * 1024;

/** One stream the client opened. */
export class SpdyStream extends Duplex {
  readonly id: number;
  /** The client's headers, names lower-cased (streamtype, port, requestid...). */
  readonly headers: SpdyHeaders;
  readonly #session: SpdySession;

  constructor(session: SpdySession, id: number, headers: SpdyHeaders) {
    super({ allowHalfOpen: true });
    this.#session = session;
    this.id = id;
    this.headers = headers;
    // A write after the connection went fails the stream; that must never throw in the node.
    this.on('error', () => undefined);
  }

  override _read(): void {
    // Data is pushed as its frames arrive.
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    const frames: Buffer[] = [];
    for (let i = 0; i < chunk.length; i += MAX_DATA) {
      frames.push(encodePlain({ type: 'data', streamId: this.id, fin: false, data: chunk.subarray(i, i + MAX_DATA) }));
    }
    this.#session.send(Buffer.concat(frames), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.#session.send(encodePlain({ type: 'data', streamId: this.id, fin: true, data: Buffer.alloc(0) }), done);
  }

  /** Ends the stream abruptly for both sides (RST_STREAM CANCEL), as spdystream's Reset. */
  reset(): void {
    if (!this.destroyed) this.#session.send(encodePlain({ type: 'rstStream', streamId: this.id, status: RST.CANCEL }));
    this.destroy();
  }
}

/** A SPDY/3.1 server session over an upgraded connection. */
export class SpdySession {
  readonly #socket: Duplex;
  readonly #encoder = new SpdyEncoder();
  readonly #decoder = new SpdyDecoder();
  readonly #streams = new Map<number, SpdyStream>();
  readonly #onStream: (stream: SpdyStream) => void;
  #queue: Promise<unknown> = Promise.resolve();
  #lastStreamId = 0;
  #closed = false;
  /** Resolves once the connection is gone, whichever side ended it. */
  readonly closed: Promise<void>;

  /** `head`: bytes already read past the HTTP upgrade. `onStream` is called once a stream is answered. */
  constructor(socket: Duplex, head: Buffer, onStream: (stream: SpdyStream) => void) {
    this.#socket = socket;
    this.#onStream = onStream;
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => socket.destroy());
    void this.closed.then(() => this.#teardown());
    void this.#readLoop(head);
  }

  /** Queues bytes for the connection after everything queued before (SYN_REPLYs included). */
  send(bytes: Buffer, done?: (err?: Error | null) => void): void {
    this.#queue = this.#queue.then(
      () =>
        new Promise<void>((resolve) => {
          if (this.#closed || this.#socket.destroyed) {
            done?.(new Error('SPDY connection closed'));
            return resolve();
          }
          this.#socket.write(bytes, (err) => {
            done?.(err);
            resolve();
          });
        }),
    );
  }

  #sendFrame(frame: SpdyFrame): void {
    const bytes = this.#encoder.encode(frame); // started now, so header blocks compress in send order
    this.#queue = this.#queue.then(async () => {
      const b = await bytes.catch(() => undefined);
      if (b && !this.#closed && !this.#socket.destroyed) this.#socket.write(b);
    });
  }

  /** GOAWAY, then the connection ends once everything queued is written (spdystream's Close). */
  close(): void {
    if (this.#closed) return;
    this.send(encodePlain({ type: 'goAway', lastGoodStreamId: this.#lastStreamId, status: 0 }));
    this.#queue = this.#queue.then(() => {
      this.#socket.end();
      setTimeout(() => this.#socket.destroy(), 5000).unref();
    });
  }

  async #readLoop(head: Buffer): Promise<void> {
    try {
      if (head.length) for (const f of await this.#decoder.push(head)) this.#handle(f);
      for await (const chunk of this.#socket) {
        for (const f of await this.#decoder.push(chunk as Buffer)) this.#handle(f);
      }
    } catch {
      this.#socket.destroy();
      return;
    }
    // The client ended its side: streams it had not finished end with it.
    for (const s of this.#streams.values()) s.push(null);
    this.#socket.end();
  }

  #handle(f: SpdyFrame): void {
    switch (f.type) {
      case 'synStream': {
        if (f.streamId <= this.#lastStreamId || f.streamId % 2 === 0) {
          this.send(encodePlain({ type: 'rstStream', streamId: f.streamId, status: RST.PROTOCOL_ERROR }));
          return;
        }
        this.#lastStreamId = f.streamId;
        const stream = new SpdyStream(this, f.streamId, f.headers);
        this.#streams.set(f.streamId, stream);
        stream.once('close', () => this.#streams.delete(f.streamId));
        this.#sendFrame({ type: 'synReply', streamId: f.streamId, fin: false, headers: {} });
        if (f.fin) stream.push(null);
        this.#onStream(stream);
        return;
      }
      case 'data': {
        const stream = this.#streams.get(f.streamId);
        if (!stream) return;
        if (f.data.length) stream.push(f.data);
        if (f.fin) stream.push(null);
        return;
      }
      case 'rstStream':
        this.#streams.get(f.streamId)?.destroy();
        return;
      case 'ping':
        if (f.id % 2 === 1) this.send(encodePlain(f));
        return;
      case 'goAway':
        this.#socket.end();
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, HEADERS: nothing to do for these streams
    }
  }

  #teardown(): void {
    this.#closed = true;
    for (const s of this.#streams.values()) s.destroy();
    this.#streams.clear();
    this.#encoder.close();
    this.#decoder.close();
  }
}
