import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from './images.ts';
import { probeOnce, ProbeWorker } from './probes.ts';

const ip = '127.12.0.1';
const dir = mkdtempSync(join(os.tmpdir(), 'node-probe-'));
let etcd: ReturnType<typeof spawn>;
const target = {
  podIP: ip,
  container: { name: 'etcd', ports: [{ name: 'client', containerPort: 2379 }] },
  pid: () => etcd.pid,
  env: {},
};

beforeAll(async () => {
  const bin = execFileSync(join(repoRoot, 'test/cluster/tools/build.sh'), ['etcd'], { encoding: 'utf8' }).trim();
  etcd = spawn(
    bin,
    [
      `--data-dir=${dir}/data`,
      `--listen-client-urls=http://${ip}:2379`,
      `--advertise-client-urls=http://${ip}:2379`,
      `--listen-peer-urls=http://${ip}:2380`,
      `--initial-advertise-peer-urls=http://${ip}:2380`,
      `--initial-cluster=default=http://${ip}:2380`,
    ],
    { stdio: 'ignore' },
  );
  const health = { httpGet: { path: '/health', port: 'client' as const } };
  while (!(await probeOnce(health, target)).ok) await new Promise((r) => setTimeout(r, 100));
});
afterAll(() => {
  etcd.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('probes against a real etcd', () => {
  it('httpGet /readyz on a named port succeeds; a missing path fails with its HTTP code', async () => {
    expect(await probeOnce({ httpGet: { path: '/readyz', port: 'client' } }, target)).toMatchObject({ ok: true });
    expect(await probeOnce({ httpGet: { path: '/nope', port: 2379 } }, target)).toEqual({
      ok: false,
      message: 'HTTP probe returned 404',
    });
  });

  it('tcpSocket connects to a listening port and fails on a closed one', async () => {
    expect((await probeOnce({ tcpSocket: { port: 2379 } }, target)).ok).toBe(true);
    expect((await probeOnce({ tcpSocket: { port: 2381 } }, target)).message).toMatch(/ECONNREFUSED/);
  });

  // nsenter into another process's mount namespace needs root.
  it.runIf(process.getuid?.() === 0)(
    'exec runs inside the process mount namespace and fails on a non-zero exit',
    async () => {
      expect((await probeOnce({ exec: { command: ['true'] } }, target)).ok).toBe(true);
      expect((await probeOnce({ exec: { command: ['false'] } }, target)).ok).toBe(false);
    },
  );

  it('reports failure only after failureThreshold failures in a row', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(8080, '127.12.0.2', r));
    const seen = await new Promise<number>((resolve) => {
      const w = new ProbeWorker(
        { httpGet: { path: '/', port: 8080, host: '127.12.0.2' }, periodSeconds: 0, failureThreshold: 3 },
        target,
        (ok) => {
          w.stop();
          resolve(ok ? -1 : requests);
        },
      );
      w.start();
    });
    server.close();
    expect(seen).toBe(3);
  });
});
