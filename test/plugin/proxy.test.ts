/**
 * `kubectl etcd why` and `statechart` end to end but for the API server: the real manager
 * listener (serve() with the journal routes) over a journal the real Runner wrote, behind a
 * stand-in for the API server's service proxy that forwards /api/v1/namespaces/NS/services/
 * SVC:http/proxy/PATH as the real one does, and answers Status objects otherwise.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../journal/index.ts';
import { serve } from '../../manager/main.ts';
import { routeJournalApi } from '../../manager/journal-api.ts';
import { ManagerMetrics } from '../../manager/metrics.ts';
import { runKubectlEtcd } from '../../plugin/cli.ts';
import { tempDb } from '../journal/helpers.ts';
import { journalBootstrap } from '../statechart/bootstrap.ts';

let journal: Journal;
let manager: Server;
let apiServer: Server;
let dir: string;
let kubeconfig: string;
let forbidden = false;

const listen = (s: Server): Promise<number> =>
  new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));

beforeAll(async () => {
  journal = Journal.open(tempDb());
  await journalBootstrap(journal);
  manager = await serve(
    { listenHost: '127.0.0.1', listenPort: 0 },
    new ManagerMetrics(),
    () => undefined,
    pino({ level: 'silent' }),
  );
  routeJournalApi(manager, { current: journal });
  const managerPort = (manager.address() as AddressInfo).port;
  const status = (code: number, reason: string, message: string) =>
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message });
  apiServer = createServer((req, res) => {
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/services\/([^/]+)\/proxy(\/.*)$/.exec(req.url ?? '');
    if (!m) return res.writeHead(404).end(status(404, 'NotFound', 'the server could not find the requested resource'));
    if (forbidden) {
      return res
        .writeHead(403)
        .end(
          status(
            403,
            'Forbidden',
            `services "${m[2]}" is forbidden: User "alice" cannot get resource "services/proxy"`,
          ),
        );
    }
    if (m[1] !== 'etcd-operator-system' || m[2] !== 'etcd-operator:http') {
      return res.writeHead(404).end(status(404, 'NotFound', `services "${m[2]?.split(':')[0]}" not found`));
    }
    void fetch(`http://127.0.0.1:${managerPort}${m[3]}`).then(async (r) => {
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? '' }).end(await r.text());
    });
  });
  const port = await listen(apiServer);
  dir = mkdtempSync(path.join(os.tmpdir(), 'kubectl-etcd-'));
  kubeconfig = path.join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user: { token: 't' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'default' } }],
      'current-context': 'x',
    }),
  );
});

afterAll(() => {
  apiServer.close();
  manager.close();
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = async (...argv: string[]) => {
  let stdout = '';
  let stderr = '';
  const code = await runKubectlEtcd(
    [...argv, '--kubeconfig', kubeconfig],
    { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) },
    {},
  );
  return { code, stdout, stderr };
};

describe('kubectl etcd why and statechart: the journal through the service proxy', () => {
  it('why prints the timeline as `etcd-operator journal` does, from the namespace of the kubeconfig context', async () => {
    const r = await run('why', 'demo');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(
      /^# EtcdCluster default\/demo \(uid uid-demo\): scalingUp.joining.awaitingStart after step #16/,
    );
    expect(r.stdout).toMatch(/#3 effect.ensureServices.failed {error: {code: ERR_ENSURE_SERVICES/);
    expect(r.stdout).toMatch(/addLearner/);
  });

  it('why -o json gives the objects and rows; --tail keeps the last steps', async () => {
    const all = JSON.parse((await run('why', 'demo', '-o', 'json')).stdout) as {
      objects: unknown[];
      rows: { seq: number }[];
    };
    expect(all.objects).toEqual([expect.objectContaining({ kind: 'EtcdCluster', name: 'demo', seq: 16 })]);
    expect(new Set(all.rows.map((r) => r.seq)).size).toBe(16);
    const tail = JSON.parse((await run('why', 'demo', '-o', 'json', '--tail', '2')).stdout) as {
      rows: { seq: number }[];
    };
    expect([...new Set(tail.rows.map((r) => r.seq))]).toEqual([15, 16]);
  });

  it('a name the journal does not have, in the manager words', async () => {
    const r = await run('why', 'nope', '-n', 'prod');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('kubectl etcd why: the journal has no object named nope in namespace prod\n');
  });

  it('statechart -o FILE writes the chart with the path, as `statechart NAME --db` draws it', async () => {
    const file = path.join(dir, 'demo.svg');
    const r = await run('statechart', 'demo', '-o', file);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^wrote .*demo.svg \(svg, \d+ bytes\)/);
    const svg = readFileSync(file, 'utf8');
    expect(svg).toMatch(/^<\?xml|^<svg/);
    expect(svg).toContain('awaitingStart');
    const dot = await run('statechart', 'demo', '--format', 'dot');
    expect(dot.stdout).toMatch(/^digraph/);
  });

  it('says what to do when the Service is elsewhere or the user may not proxy', async () => {
    const elsewhere = await run('why', 'demo', '--operator-namespace', 'ops');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(
      /no Service etcd-operator in namespace ops, which reaches the manager's journal: give --operator-namespace NS and --operator-service NAME/,
    );
    forbidden = true;
    try {
      const denied = await run('why', 'demo');
      expect(denied.stderr).toMatch(
        /It takes get on services\/proxy for that Service: kubectl create rolebinding NAME -n etcd-operator-system --role=etcd-operator-journal-reader --user=YOU/,
      );
    } finally {
      forbidden = false;
    }
  });

  it('the manager listener still serves its own paths', async () => {
    const port = (manager.address() as AddressInfo).port;
    expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).text()).toBe('ok\n');
    const post = await fetch(`http://127.0.0.1:${port}/api/journal/default/demo`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('a kubeconfig that cannot be read: says which and how to give another', async () => {
    const errors: string[] = [];
    const code = await runKubectlEtcd(
      ['status', 'demo', '--kubeconfig', path.join(dir, 'missing')],
      { stdout: () => undefined, stderr: (s) => void errors.push(s) },
      {},
    );
    expect(code).toBe(1);
    expect(errors.join('')).toMatch(
      /cannot read the kubeconfig .*missing \(ENOENT.*\): give --kubeconfig PATH or set KUBECONFIG/,
    );
  });
});
