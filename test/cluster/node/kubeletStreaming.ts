/**
 * The kubelet's streaming endpoints: /exec/{ns}/{pod}/{container}, /attach/{ns}/{pod}/{container}
 * and /portForward/{ns}/{pod}. The API server asks for an upgrade to SPDY/3.1 with the protocols
 * it speaks in X-Stream-Protocol-Version; refusals before the upgrade are plain HTTP errors with
 * the kubelet's words, which kubectl prints after "unable to upgrade connection".
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ExecTarget } from './containerExec.ts';
import { PORT_FORWARD_PROTOCOL, PortForwarder, type ForwardTarget } from './portForward.ts';
import {
  REMOTE_COMMAND_PROTOCOL,
  serveAttach,
  serveExec,
  streamCollector,
  streamOptions,
  type AttachTarget,
} from './remoteCommand.ts';
import { SpdySession } from './spdySession.ts';

/** A running container, for exec and attach. */
export type RunningContainer = ExecTarget & AttachTarget;

/** Finds what a streaming request is for; a string says why there is none (sent as a 404). */
export interface StreamingBackend {
  readonly container: (namespace: string, pod: string, container: string) => RunningContainer | string;
  readonly pod: (namespace: string, pod: string) => ForwardTarget | string;
}

const routes = /^\/(exec|attach)\/([^/]+)\/([^/]+)\/([^/]+)$|^\/(portForward)\/([^/]+)\/([^/]+)$/;

function refuse(socket: Duplex, code: number, reason: string, message: string, headers: string[] = []): void {
  const body = `${message}\n`;
  socket.end(
    [
      `HTTP/1.1 ${code} ${reason}`,
      'Content-Type: text/plain; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      ...headers,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/** The protocols the client offers, from every X-Stream-Protocol-Version header. */
function offered(req: IncomingMessage): string[] {
  const raw = req.headersDistinct['x-stream-protocol-version'] ?? [];
  return raw.flatMap((v) => v.split(',')).map((v) => v.trim());
}

/** Answers an upgrade request on the kubelet port; every other upgrade is refused. */
export function serveStreaming(backend: StreamingBackend, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  socket.on('error', () => socket.destroy());
  const url = new URL(req.url ?? '/', 'https://127.0.0.1');
  const m = routes.exec(url.pathname);
  if (!m) return refuse(socket, 404, 'Not Found', 'not served by the local node');
  if (req.headers.upgrade?.toLowerCase() !== 'spdy/3.1') {
    return refuse(socket, 400, 'Bad Request', `unable to upgrade: the local node speaks only SPDY/3.1`);
  }
  const kind = (m[1] ?? m[5]) as 'exec' | 'attach' | 'portForward';
  const [ns, pod, container] = (kind === 'portForward' ? [m[6], m[7], ''] : [m[2], m[3], m[4]]).map((s) =>
    decodeURIComponent(s ?? ''),
  ) as [string, string, string];
  const protocol = kind === 'portForward' ? PORT_FORWARD_PROTOCOL : REMOTE_COMMAND_PROTOCOL;
  const clientProtocols = offered(req);
  if (!clientProtocols.length) {
    return refuse(socket, 400, 'Bad Request', 'unable to upgrade: X-Stream-Protocol-Version is required');
  }
  if (!clientProtocols.includes(protocol)) {
    const message = `unable to upgrade: unable to negotiate protocol: client supports [${clientProtocols.join(' ')}], server accepts [${protocol}]`;
    return refuse(socket, 403, 'Forbidden', message, [`X-Accepted-Stream-Protocol-Versions: ${protocol}`]);
  }
  if (kind === 'portForward') {
    const target = backend.pod(ns, pod);
    if (typeof target === 'string') return refuse(socket, 404, 'Not Found', target);
    upgrade(socket, protocol);
    const forwarder = new PortForwarder(target);
    const session = new SpdySession(socket, head, (s) => forwarder.add(s));
    void session.closed.then(() => forwarder.close());
    return;
  }
  const opts = streamOptions(url.searchParams);
  if (typeof opts === 'string') return refuse(socket, 400, 'Bad Request', opts);
  const argv = url.searchParams.getAll('command');
  if (kind === 'exec' && !argv.length) return refuse(socket, 400, 'Bad Request', 'missing command');
  const target = backend.container(ns, pod, container);
  if (typeof target === 'string') return refuse(socket, 404, 'Not Found', target);
  upgrade(socket, protocol);
  const streams = streamCollector(opts);
  const session = new SpdySession(socket, head, (s) => streams.add(s));
  streams.ready
    .then((s) => (kind === 'exec' ? serveExec(session, s, target, argv, opts) : serveAttach(session, s, target)))
    .catch(() => session.close());
}

function upgrade(socket: Duplex, protocol: string): void {
  socket.write(
    [
      'HTTP/1.1 101 Switching Protocols',
      'Connection: Upgrade',
      'Upgrade: SPDY/3.1',
      `X-Stream-Protocol-Version: ${protocol}`,
      '',
      '',
    ].join('\r\n'),
  );
}
