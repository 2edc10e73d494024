import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startKubeletServer, type KubeletServer } from './kubeletServer.ts';
import type { StreamingBackend } from './kubeletStreaming.ts';
import { ROOT } from './securityContext.ts';
import { SpdyDecoder, SpdyEncoder, type SpdyFrame, type SpdyHeaders } from './spdyFrames.ts';

const clients: Client[] = [];

/**
 * The API server's side of the kubelet streaming API, as spdystream speaks it: an HTTP upgrade,
 * then client streams (odd IDs), each answered with SYN_REPLY.
 */
class Client {
  readonly status: Promise<{ code: number; head: string }>;
  readonly data = new Map<number, Buffer>();
  readonly fin = new Set<number>();
  readonly reset = new Set<number>();
  readonly replied = new Set<number>();
  readonly closed: Promise<void>;
  /** What went wrong reading frames while the client was still there (checked after each test). */
  readonly errors: unknown[] = [];
  readonly #sock: tls.TLSSocket;
  readonly #enc = new SpdyEncoder();
  readonly #dec = new SpdyDecoder();
  #next = 1;
  #gone = false;
  #reading: Promise<void> = Promise.resolve();

  constructor(port: number, path: string, protocol: string | undefined) {
    clients.push(this);
    this.#sock = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    const headers = [
      'Connection: Upgrade',
      'Upgrade: SPDY/3.1',
      ...(protocol ? [`X-Stream-Protocol-Version: ${protocol}`] : []),
    ];
    this.#sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.join('\r\n')}\r\n\r\n`);
    // Closed once the socket is and every byte it brought is decoded (decoding is asynchronous).
    this.closed = new Promise<void>((r) => this.#sock.once('close', () => r())).then(() => this.#reading);
    this.status = new Promise((resolve) => {
      let buf = Buffer.alloc(0);
      let upgraded = false;
      this.#sock.on('data', (chunk: Buffer) => {
        if (upgraded) return this.#frames(chunk);
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        const code = Number(head.split(' ')[1]);
        upgraded = code === 101;
        resolve({ code, head: buf.toString() });
        if (upgraded) this.#frames(buf.subarray(end + 4));
      });
    });
  }

  /** Decodes in arrival order; once destroyed, bytes still in flight are dropped, as a closed client would. */
  #frames(chunk: Buffer): void {
    this.#reading = this.#reading
      .then(async () => {
        if (this.#gone) return;
        for (const f of await this.#dec.push(chunk)) if (!this.#gone) this.#on(f);
      })
      .catch((err: unknown) => {
        if (!this.#gone) this.errors.push(err);
      });
  }

  #on(f: SpdyFrame): void {
    if (f.type === 'synReply') this.replied.add(f.streamId);
    if (f.type === 'data')
      this.data.set(f.streamId, Buffer.concat([this.data.get(f.streamId) ?? Buffer.alloc(0), f.data]));
    if (f.type === 'data' && f.fin) this.fin.add(f.streamId);
    if (f.type === 'rstStream') this.reset.add(f.streamId);
  }

  async open(headers: SpdyHeaders, fin = false): Promise<number> {
    const id = this.#next;
    this.#next += 2;
    this.#sock.write(
      await this.#enc.encode({ type: 'synStream', streamId: id, associatedId: 0, priority: 0, fin, headers }),
    );
    return id;
  }

  async send(id: number, data: string, fin: boolean): Promise<void> {
    this.#sock.write(await this.#enc.encode({ type: 'data', streamId: id, fin, data: Buffer.from(data) }));
  }

  text(id: number): string {
    return this.data.get(id)?.toString() ?? '';
  }

  destroy(): void {
    this.#gone = true;
    this.#sock.destroy();
    this.#enc.close();
    this.#dec.close();
  }
}

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.runIf(process.getuid?.() === 0)('kubelet streaming API (exec and port-forward over SPDY/3.1)', () => {
  const dir = mkdtempSync(join(os.tmpdir(), 'kubelet-streaming-'));
  let server: KubeletServer;
  let echo: net.Server;
  let echoPort = 0;
  const backend: StreamingBackend & { logFileOf: () => undefined } = {
    logFileOf: () => undefined,
    // This test process stands in for the container: exec enters its own namespaces.
    container: (_ns, pod, container) =>
      pod === 'here'
        ? {
            pid: process.pid,
            env: { PATH: '/usr/bin:/bin' },
            identity: ROOT,
            workingDir: dir,
            log: { file: '', live: () => false },
            stdinOnce: false,
          }
        : `container not found ("${container}")`,
    pod: (_ns, pod) => (pod === 'here' ? { name: pod, uid: 'uid-1', addresses: ['127.0.0.1'] } : 'pod does not exist'),
  };
  beforeAll(async () => {
    server = await startKubeletServer(dir, backend);
    echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    echoPort = (echo.address() as net.AddressInfo).port;
  });
  afterEach(() => {
    // A frame the client could not decode is a failure of this test, not a stray rejection later.
    for (const c of clients.splice(0)) expect(c.errors).toEqual([]);
  });
  afterAll(async () => {
    await server.close();
    echo.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exec runs the command with stdin, stdout and stderr, then reports its exit code on the error stream', async () => {
    const c = new Client(
      server.port,
      '/exec/ns/here/main?command=sh&command=-c&command=pwd%3B+cat%3B+echo+oops+>%262%3B+exit+3&input=1&output=1&error=1',
      'v5.channel.k8s.io,v4.channel.k8s.io',
    );
    expect((await c.status).head).toContain('X-Stream-Protocol-Version: v4.channel.k8s.io');
    const error = await c.open({ streamtype: 'error' });
    const stdin = await c.open({ streamtype: 'stdin' });
    const stdout = await c.open({ streamtype: 'stdout' });
    const stderr = await c.open({ streamtype: 'stderr' });
    await c.send(stdin, 'piped in\n', true);
    await c.closed;
    expect([...c.replied].sort()).toEqual([error, stdin, stdout, stderr].sort());
    expect(c.text(stdout)).toBe(`${dir}\npiped in\n`);
    expect(c.text(stderr)).toBe('oops\n');
    expect(JSON.parse(c.text(error))).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: exit status 3',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '3' }] },
    });
    expect([stdout, stderr, error].every((id) => c.fin.has(id))).toBe(true);
    c.destroy();
  });

  it('with a terminal, the command gets one of the size the resize stream says', async () => {
    const cmd = ['sh', '-c', 'sleep 0.5; tty; stty size; exit 4'].map((a) => `command=${encodeURIComponent(a)}`);
    const c = new Client(
      server.port,
      `/exec/ns/here/main?${cmd.join('&')}&output=1&tty=1&error=1`,
      'v4.channel.k8s.io',
    );
    const error = await c.open({ streamtype: 'error' });
    const stdout = await c.open({ streamtype: 'stdout' });
    const resize = await c.open({ streamtype: 'resize' });
    await c.send(resize, '{"Width":100,"Height":30}', false);
    await c.closed;
    expect(c.text(stdout)).toMatch(/^\/dev\/pts\/\d+\r\n30 100\r\n$/);
    expect(JSON.parse(c.text(error))).toMatchObject({ details: { causes: [{ reason: 'ExitCode', message: '4' }] } });
    c.destroy();
  });

  it('a client that goes away takes its command with it', async () => {
    const marker = `${(process.pid % 1000) + 100}.25`; // a sleep of its own, to find it
    const c = new Client(
      server.port,
      `/exec/ns/here/main?command=sleep&command=${marker}&output=1`,
      'v4.channel.k8s.io',
    );
    await c.open({ streamtype: 'error' });
    await c.open({ streamtype: 'stdout' });
    const running = (): boolean =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .some((p) => {
          try {
            return readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
          } catch {
            return false;
          }
        });
    await until(running);
    c.destroy();
    await until(() => !running());
  });

  it('a command that succeeds reports Success', async () => {
    const c = new Client(server.port, '/exec/ns/here/main?command=true&output=1', 'v4.channel.k8s.io');
    const error = await c.open({ streamtype: 'error' });
    await c.open({ streamtype: 'stdout' });
    await c.closed;
    expect(JSON.parse(c.text(error))).toEqual({ metadata: {}, status: 'Success' });
    c.destroy();
  });

  it("refuses before upgrading, with the kubelet's words: no protocol in common, no such container", async () => {
    const old = new Client(server.port, '/exec/ns/here/main?command=true&output=1', 'channel.k8s.io');
    expect(await old.status).toMatchObject({ code: 403 });
    expect((await old.status).head).toContain('unable to negotiate protocol');
    old.destroy();
    const none = new Client(server.port, '/exec/ns/gone/main?command=true&output=1', 'v4.channel.k8s.io');
    expect(await none.status).toMatchObject({ code: 404 });
    expect((await none.status).head).toContain('container not found ("main")');
    none.destroy();
  });

  it('port-forward pipes several connections at once and reports a refused one on its error stream', async () => {
    const c = new Client(server.port, '/portForward/ns/here', 'portforward.k8s.io');
    expect(await c.status).toMatchObject({ code: 101 });
    const pairs: { error: number; data: number; requestid: string }[] = [];
    for (const requestid of ['0', '1', '2']) {
      const error = await c.open({ streamtype: 'error', port: String(echoPort), requestid }, true);
      const data = await c.open({ streamtype: 'data', port: String(echoPort), requestid });
      pairs.push({ error, data, requestid });
    }
    for (const p of pairs) await c.send(p.data, `hello ${p.requestid}`, true);
    await until(() => pairs.every((p) => c.fin.has(p.data) && c.fin.has(p.error)));
    expect(pairs.map((p) => c.text(p.data))).toEqual(['hello 0', 'hello 1', 'hello 2']);
    expect(pairs.map((p) => c.text(p.error))).toEqual(['', '', '']);

    const closed = await new Promise<number>((r) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (s.address() as net.AddressInfo).port;
        s.close(() => r(port));
      });
    });
    const error = await c.open({ streamtype: 'error', port: String(closed), requestid: '3' }, true);
    const data = await c.open({ streamtype: 'data', port: String(closed), requestid: '3' });
    await until(() => c.reset.has(data) && c.reset.has(error));
    expect(c.text(error)).toBe(
      `error forwarding port ${closed} to pod here, uid uid-1: dial tcp4 127.0.0.1:${closed}: connect: connection refused`,
    );
    c.destroy();
  });
});
