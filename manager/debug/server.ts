/**
 * The manager's debug page, on its own listener (`--debug-listen`): read-only HTML and a small
 * script from ./static (no build step, nothing from the network), a JSON API over the journal,
 * and server-sent events that carry each committed write to the open pages. docs/statecharts.md
 * ("Live page") says how to reach it and why it has a listener of its own.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import type { Logger } from 'pino';
import { redactedJson } from '../../journal/index.ts';
import { isMachineName } from '../../statechart/index.ts';
import { LiveObjects, NoJournalError, type JournalSource, type LiveUpdate } from './live-objects.ts';

/** What the debug page needs. */
export interface DebugPageOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly source: JournalSource;
  /** The uids of the objects the manager runs now; undefined when it runs none (not leading). */
  readonly running?: () => ReadonlySet<string> | undefined;
  readonly log: Logger;
  /** Most live connections at once (default 32); more are refused with 503. */
  readonly maxStreams?: number;
  /** Seconds between keep-alive comments on a live connection (default 15). */
  readonly keepAliveSeconds?: number;
}

/** A debug page being served. */
export interface DebugPage {
  readonly server: Server;
  /** `http://HOST:PORT`. */
  readonly url: string;
  readonly live: LiveObjects;
  /** Ends the live connections and stops listening. */
  close(): Promise<void>;
}

/** Most rows a reconnecting page is sent to catch up. */
const CATCH_UP = 1000;
const STATIC = join(import.meta.dirname, 'static');
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};
const FILES = ['index.html', 'object.html', 'page.css', 'common.js', 'index.js', 'object.js'];
// The page runs its own script only and talks to this server only.
const HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/** Serves the debug page; resolves once listening. */
export async function serveDebugPage(o: DebugPageOptions): Promise<DebugPage> {
  const files = new Map(FILES.map((f) => [f, readFileSync(join(STATIC, f))]));
  const live = new LiveObjects({
    source: o.source,
    ...(o.running ? { running: o.running } : {}),
    onError: (err) => o.log.warn({ err: String(err) }, 'debug page: a journal write could not be shown'),
  });
  const streams = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    void route(req, res).catch((err: unknown) => fail(res, err));
  });

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'read-only: GET only\n');
    const url = new URL(req.url ?? '/', 'http://page');
    const path = url.pathname;
    const parts = path.split('/').map(decodeURIComponent);
    if (path === '/') return file(res, 'index.html');
    if (path === '/favicon.ico') return void res.writeHead(204, HEADERS).end();
    if (parts[1] === 'objects' && parts.length === 3) return file(res, 'object.html');
    if (parts[1] === 'static' && parts.length === 3 && files.has(parts[2] ?? '')) return file(res, parts[2] ?? '');
    if (path === '/api/objects') return json(res, { lsn: live.lsn(), objects: live.index() });
    if (path === '/api/events') return stream(req, res, url);
    if (parts[1] === 'api' && parts[2] === 'charts' && parts.length === 4) {
      const machine = (parts[3] ?? '').replace(/\.svg$/, '');
      if (!isMachineName(machine)) return send(res, 404, 'text/plain', `no machine ${machine}\n`);
      return send(res, 200, 'image/svg+xml', await live.chartSvg(machine));
    }
    if (parts[1] === 'api' && parts[2] === 'objects' && parts.length >= 4) {
      const uid = parts[3] ?? '';
      const lsn = live.lsn();
      const view = live.view(uid);
      if (!view) return send(res, 404, 'application/json', `${JSON.stringify({ error: `no object ${uid}` })}\n`);
      if (parts.length === 4) return json(res, { lsn, object: view });
      if (parts[4] === 'timeline' && parts.length === 5) {
        const before = Number(url.searchParams.get('before') ?? NaN);
        const steps = Math.min(Math.max(Number(url.searchParams.get('steps') ?? 50) || 50, 1), 500);
        return json(res, live.timeline(uid, Number.isSafeInteger(before) ? before : undefined, steps));
      }
      if (parts[4] === 'chart.svg' && parts.length === 5) {
        return send(res, 200, 'image/svg+xml', (await live.overlaySvg(uid)) ?? '');
      }
    }
    send(res, 404, 'text/plain', 'not found: the debug page is at /\n');
  };

  const file = (res: ServerResponse, name: string): void =>
    send(res, 200, TYPES[extname(name)] ?? 'application/octet-stream', files.get(name) ?? '');

  /** Server-sent events: `object` per write (with the view when ?uid= names it), `gone`, `reset`. */
  const stream = (req: IncomingMessage, res: ServerResponse, url: URL): void => {
    if (streams.size >= (o.maxStreams ?? 32)) return send(res, 503, 'text/plain', 'too many live connections\n');
    const uid = url.searchParams.get('uid') ?? undefined;
    const from = Number(req.headers['last-event-id'] ?? url.searchParams.get('after') ?? NaN);
    const event = (name: string, data: unknown, id?: number): void => {
      res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${name}\ndata: ${redactedJson(data)}\n\n`);
    };
    const unsubscribe = live.subscribe((u: LiveUpdate) => {
      if (u.kind === 'object') event('object', { line: u.line, rows: u.rows, view: u.view }, u.lsn);
      else event(u.kind, u);
    }, uid);
    streams.add(res);
    req.on('close', () => {
      unsubscribe();
      streams.delete(res);
    });
    res.writeHead(200, { ...HEADERS, 'content-type': 'text/event-stream', connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    // Subscribed first, then caught up: a write between the page's load and now is sent (perhaps twice; pages skip seen lsns).
    if (!Number.isSafeInteger(from)) return;
    const lsn = live.lsn();
    if (lsn === from) return;
    if (uid === undefined) return event('objects', { objects: live.index() }, lsn);
    const rows = live.rowsAfter(uid, from, CATCH_UP + 1);
    // Too far behind (or a journal numbered anew): the page loads again rather than replay history.
    if (rows.length > CATCH_UP || from > lsn) return event('reset', { kind: 'reset' });
    const view = live.view(uid);
    if (view) event('object', { line: view, rows, view }, lsn);
  };

  const keepAlive = setInterval(
    () => {
      for (const res of streams) res.write(': keep-alive\n\n');
    },
    (o.keepAliveSeconds ?? 15) * 1000,
  );
  keepAlive.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  o.log.info({ debugAddress: address, debugPort: port }, `serving the debug page on ${url}/`);
  return {
    server,
    url,
    live,
    close: () => {
      clearInterval(keepAlive);
      live.close();
      for (const res of streams) res.end();
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { ...HEADERS, 'content-type': type }).end(body);
}

/** JSON through the journal's redaction once more: nothing secret-looking leaves the page, whatever the journal holds. */
function json(res: ServerResponse, value: unknown): void {
  send(res, 200, 'application/json', `${redactedJson(value)}\n`);
}

function fail(res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.end();
  const status = err instanceof NoJournalError ? 503 : 500;
  send(
    res,
    status,
    'application/json',
    `${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`,
  );
}
