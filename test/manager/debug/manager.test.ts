import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { tempDb } from '../../journal/helpers.ts';

const cli = join(import.meta.dirname, '..', '..', '..', 'manager', 'cli.ts');

/** A kubeconfig naming an API server that refuses connections: the manager starts, its caches never fill. */
function deadKubeconfig(dir: string): string {
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
  return path;
}

describe('manager: --debug-listen', () => {
  it('serves the debug page beside /metrics, on its own port, and stops it on SIGTERM', async () => {
    const journal = tempDb();
    const child = spawn(
      process.execPath,
      [
        cli,
        'manager',
        `--kubeconfig=${deadKubeconfig(dirname(journal))}`,
        `--journal=${journal}`,
        '--listen=127.0.0.1:0',
        '--debug-listen=127.0.0.1:0',
        '--leader-elect=false',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const ports: { metrics?: number; debug?: number } = {};
    const lines = createInterface({ input: child.stdout });
    const listening = new Promise<void>((resolve) =>
      lines.on('line', (text) => {
        const line = JSON.parse(text) as { port?: number; debugPort?: number; msg: string };
        if (line.port !== undefined) ports.metrics = line.port;
        if (line.debugPort !== undefined) ports.debug = line.debugPort;
        if (/journal open/.test(line.msg) && ports.debug !== undefined) resolve();
      }),
    );
    try {
      await listening;
      expect(ports.debug).not.toBe(ports.metrics);
      const index = await fetch(`http://127.0.0.1:${ports.debug}/api/objects`);
      expect(index.status).toBe(200);
      expect(await index.json()).toMatchObject({ objects: [] });
      expect((await fetch(`http://127.0.0.1:${ports.debug}/`)).headers.get('content-type')).toMatch(/text\/html/);
      // The metrics listener does not serve the page, and the page does not serve the metrics.
      expect((await fetch(`http://127.0.0.1:${ports.metrics}/api/objects`)).status).toBe(404);
      expect((await fetch(`http://127.0.0.1:${ports.debug}/metrics`)).status).toBe(404);
      const stream = await fetch(`http://127.0.0.1:${ports.debug}/api/events`);
      expect(stream.status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
