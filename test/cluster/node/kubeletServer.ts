/**
 * The part of the kubelet API that is cheap to serve: /containerLogs, so `kubectl logs [-f]
 * [--previous] [--tail]` works. HTTPS on 127.0.0.1 with a self-signed certificate (the API
 * server does not check kubelet certificates unless told to); no exec, attach or port-forward.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

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

/** Starts the server on a free port of 127.0.0.1. */
export async function startKubeletServer(dir: string, logFileOf: LogFileOf): Promise<KubeletServer> {
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
    void follow(found.file, Buffer.byteLength(text), found.live, res, () => req.destroyed);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Streams what is appended to the file until the run ends (and is read) or the client goes. */
async function follow(
  file: string,
  from: number,
  live: () => boolean,
  res: NodeJS.WritableStream & { end(): void },
  gone: () => boolean,
): Promise<void> {
  const fh = await open(file, 'r');
  let pos = from;
  try {
    for (;;) {
      const wasLive = live();
      const { size } = await fh.stat();
      if (size > pos) {
        const buf = Buffer.alloc(size - pos);
        await fh.read(buf, 0, buf.length, pos);
        pos = size;
        res.write(buf);
      }
      if (gone() || !wasLive) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await fh.close();
    res.end();
  }
}
