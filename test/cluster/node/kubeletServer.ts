/**
 * The kubelet API the API server proxies to: /containerLogs (`kubectl logs [-f] [--previous]
 * [--tail]`), and /exec, /attach and /portForward, which the API server reaches with an HTTP
 * upgrade to SPDY/3.1 (it translates kubectl's WebSockets, see docs/local-node.md). HTTPS on
 * 127.0.0.1 with a self-signed certificate (the API server does not check kubelet certificates
 * unless told to).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import { followLog } from './logFollow.ts';
import { serveStreaming, type StreamingBackend } from './kubeletStreaming.ts';

const run = promisify(execFile);

/** Finds the log file of a container's current (or previous) run; undefined when unknown. */
export type LogFileOf = (
  namespace: string,
  pod: string,
  container: string,
  previous: boolean,
) => { file: string; live: () => boolean } | undefined;

/** The running server. */
export interface KubeletServer {
  readonly port: number;
  close(): Promise<void>;
}

async function certificate(dir: string): Promise<{ key: Buffer; cert: Buffer }> {
  const key = join(dir, 'kubelet.key');
  const cert = join(dir, 'kubelet.crt');
  if (!existsSync(key) || !existsSync(cert)) {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '3650',
      '-subj',
      '/CN=local-node-kubelet',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
  }
  return { key: readFileSync(key), cert: readFileSync(cert) };
}

function lastLines(text: string, n: number): string {
  const lines = text.split(/(?<=\n)/);
  return lines.slice(Math.max(0, lines.length - n)).join('');
}

/** What the server serves from: the containers' logs, and the running containers and Pods. */
export interface KubeletBackend extends StreamingBackend {
  readonly logFileOf: LogFileOf;
}

/** Starts the server on a free port of 127.0.0.1. */
export async function startKubeletServer(dir: string, backend: KubeletBackend): Promise<KubeletServer> {
  const { logFileOf } = backend;
  const server = https.createServer(await certificate(dir), (req, res) => {
    const url = new URL(req.url ?? '/', 'https://127.0.0.1');
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    if (url.pathname === '/healthz') return void res.end('ok');
    if (!m) return void res.writeHead(404).end('not served by the local node\n');
    const [ns, pod, container] = m.slice(1).map(decodeURIComponent) as [string, string, string];
    const found = logFileOf(ns, pod, container, url.searchParams.get('previous') === 'true');
    if (!found || !existsSync(found.file)) {
      return void res
        .writeHead(404)
        .end(
          `container "${container}" in pod "${pod}" has no ${url.searchParams.get('previous') === 'true' ? 'previous ' : ''}log\n`,
        );
    }
    const tail = url.searchParams.get('tailLines');
    const text = readFileSync(found.file, 'utf8');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write(tail ? lastLines(text, Number(tail)) : text);
    if (url.searchParams.get('follow') !== 'true') return void res.end();
    void followLog(found.file, Buffer.byteLength(text), found.live, res, () => req.destroyed);
  });
  // Upgraded connections leave the server's books: closed by hand when the node stops.
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    serveStreaming(backend, req, socket, head);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        for (const s of upgraded) s.destroy();
        server.close(() => resolve());
      }),
  };
}
