/**
 * The kubelet's port-forward protocol (portforward.k8s.io over SPDY/3.1): for each connection
 * the client opens an error stream and a data stream with the same requestID and port; the
 * kubelet connects to the port inside the Pod and pipes the data stream both ways. A connection
 * that fails gets its message on the error stream and both streams reset.
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { Duplex } from 'node:stream';
import type { SpdyStream } from './spdySession.ts';

/** The one port-forward protocol the kubelet speaks. */
export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';
/** As the kubelet's streamCreationTimeout: how long half a pair waits for the other half. */
const PAIR_MS = 30_000;

/** The Pod connections go to. */
export interface ForwardTarget {
  readonly name: string;
  readonly uid: string;
  /**
   * Addresses tried in order from the host: the Pod's IP, then (for a Pod on the host's
   * network) the host's address.
   */
  readonly addresses: readonly string[];
  /**
   * The Pod's network namespace (none for a Pod on the host's network): when its IP refuses,
   * 127.0.0.1 is dialled inside it, as a kubelet does, so a program bound to "localhost" in its
   * Pod is reached.
   */
  readonly netns?: string;
}

/** Why a stream is refused before any pairing, as the kubelet checks its headers. */
export function streamHeaderError(stream: SpdyStream): string | undefined {
  const port = stream.headers.port ?? '';
  if (!port) return '"port" header is required';
  if (!/^\d+$/.test(port) || Number(port) < 1 || Number(port) > 65535) return `unable to parse "${port}" as a port`;
  const type = stream.headers.streamtype ?? '';
  if (type !== 'error' && type !== 'data')
    return type ? `invalid stream type "${type}"` : '"streamType" header is required';
  return undefined;
}

/** Pairs the streams of one port-forward session and forwards each pair's connection. */
export class PortForwarder {
  readonly #target: ForwardTarget;
  readonly #pairs = new Map<string, { error?: SpdyStream; data?: SpdyStream; timer: NodeJS.Timeout }>();

  constructor(target: ForwardTarget) {
    this.#target = target;
  }

  /** Takes a stream the client opened. */
  add(stream: SpdyStream): void {
    if (streamHeaderError(stream)) return stream.reset();
    const type = stream.headers.streamtype as 'error' | 'data';
    // Without a requestID the kubelet derives one from the stream IDs (data is error + 2).
    const id = stream.headers.requestid ?? String(type === 'error' ? stream.id : stream.id - 2);
    let pair = this.#pairs.get(id);
    if (!pair) {
      const timer = setTimeout(() => {
        this.#pairs.get(id)?.error?.end(`timed out waiting for streams of request ${id}`);
        this.#pairs.delete(id);
      }, PAIR_MS);
      pair = { timer };
      this.#pairs.set(id, pair);
    }
    if (pair[type]) {
      pair.error?.write(`error processing stream for request ${id}: ${type} stream already assigned`);
      return stream.reset();
    }
    pair[type] = stream;
    if (pair.error && pair.data) {
      clearTimeout(pair.timer);
      this.#pairs.delete(id);
      void this.#forward(pair.error, pair.data, Number(stream.headers.port));
    }
  }

  async #forward(error: SpdyStream, data: SpdyStream, port: number): Promise<void> {
    error.resume(); // the client closes its side of the error stream at once
    let sock: Duplex | undefined;
    let failure = '';
    for (const host of this.#target.addresses) {
      try {
        sock = await connect(host, port);
        break;
      } catch (err) {
        failure = `dial tcp4 ${host}:${port}: connect: ${(err as Error).message}`;
      }
    }
    if (!sock && this.#target.netns) {
      sock = await connectInside(this.#target.netns, port).catch((err: unknown) => {
        failure = `dial tcp4 127.0.0.1:${port}: connect: ${(err as Error).message}`;
        return undefined;
      });
    }
    if (!sock) {
      const { name, uid } = this.#target;
      error.write(`error forwarding port ${port} to pod ${name}, uid ${uid}: ${failure}`, () => {
        data.reset();
        error.reset();
      });
      return;
    }
    const conn = sock;
    conn.on('error', () => conn.destroy());
    data.on('error', () => conn.destroy());
    data.pipe(conn);
    conn.pipe(data);
    data.once('close', () => conn.destroy());
    conn.once('close', () => {
      if (!data.writableEnded) data.end();
      error.end();
    });
  }

  /** Drops pairs still waiting for their other half. */
  close(): void {
    for (const p of this.#pairs.values()) clearTimeout(p.timer);
    this.#pairs.clear();
  }
}

/** Dials 127.0.0.1 inside the namespace and pipes stdin and stdout to the connection. */
const INSIDE = `const s = require('node:net').connect({ host: '127.0.0.1', port: Number(process.argv[1]) });
s.once('connect', () => { process.stderr.write('connected\\n'); process.stdin.pipe(s); s.pipe(process.stdout); });
s.once('error', (e) => { process.stderr.write((e.code === 'ECONNREFUSED' ? 'connection refused' : e.message) + '\\n'); process.exit(1); });`;

/** A connection to 127.0.0.1:port inside a network namespace, through a small Node process there. */
function connectInside(netns: string, port: number): Promise<Duplex> {
  const child = spawn('nsenter', [`--net=${netns}`, '--', process.execPath, '-e', INSIDE, String(port)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    child.once('error', (err) => reject(err));
    lines.once('line', (line) => {
      if (line !== 'connected') return reject(new Error(line));
      const conn = Duplex.from({ readable: child.stdout, writable: child.stdin });
      conn.once('close', () => child.kill('SIGKILL'));
      resolve(conn);
    });
    child.once('exit', () => reject(new Error('connection refused')));
  });
}

function connect(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port, timeout: 10_000 });
    sock.once('connect', () => {
      sock.setTimeout(0);
      resolve(sock);
    });
    sock.once('timeout', () => {
      sock.destroy();
      reject(new Error('i/o timeout'));
    });
    sock.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === 'ECONNREFUSED' ? 'connection refused' : err.message));
    });
  });
}
