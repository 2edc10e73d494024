/**
 * The debug page as a user reaches it: the chart Helm-installed with `debug.enabled`, an
 * EtcdCluster applied, `kubectl port-forward deploy/<release>` to the page, the page opened in
 * Debian's chromium (headless, playwright-core). The cluster is scaled 1 -> 5 -> 1 while the page
 * stays open: its highlight and timeline move through joining, promoting and steady without a
 * reload, and each transition's time from the journal's commit to the page showing it is printed
 * (not asserted: a figure, for docs/performance.md). `kubectl exec deploy/<release> --
 * etcd-operator journal demo` reads the same story from inside the manager's Pod.
 * Screenshots go to test/artifacts/live-page/ (gitignored).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { TimelineRow } from '../../journal/index.ts';
import type { ObjectLine } from '../../manager/debug/views.ts';
import { kubeconfigArgs } from '../../localcluster/controlplane/kubectl.ts';
import { until } from '../../localcluster/until.ts';
import { clientsOf } from '../effects/kubernetes/e2e-context.ts';
import { hasChromium, launchChromium } from '../chromium.ts';
import { installRelease, uninstallRelease } from './chart-release.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { kubectl } from './kube.ts';

const ns = `live-page-${process.pid}`;
const release = 'etcd-operator';
const ARTIFACTS = path.join(import.meta.dirname, '..', 'artifacts', 'live-page');
const hasNode = inject('clusterHasNode');

let home: string;
let forward: ChildProcess | undefined;
let url: string;
let browser: Browser | undefined;

/** `kubectl port-forward deploy/<release> :8081`: the local address it prints once it listens. */
async function portForward(): Promise<string> {
  const args = [...kubeconfigArgs(inject('kubeconfig')), 'port-forward', '-n', ns, `deploy/${release}`, ':8081'];
  const child = spawn(inject('kubectlPath'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  forward = child;
  let said = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kubectl port-forward said only: ${said}`)), 30_000);
    const read = (chunk: Buffer): void => {
      said += chunk.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(said);
      if (!m) return;
      clearTimeout(timer);
      resolve(`http://127.0.0.1:${m[1] ?? ''}`);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => reject(new Error(`kubectl port-forward exited ${String(code)}: ${said}`)));
  });
}

const getJSON = async <T>(p: string): Promise<T> => {
  const res = await fetch(`${url}${p}`);
  if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};

/** What the page showed after each live update: the step it applied, when, and the state it then highlighted. */
interface Applied {
  readonly seq: number;
  readonly at: number;
  readonly state: string;
}

describe.runIf(hasNode && hasChromium)('the live debug page through Helm, port-forward and chromium', () => {
  let demo: ClusterUnderTest;

  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'live-page-e2e-'));
    mkdirSync(ARTIFACTS, { recursive: true });
    // The manager binds its Pod IP (installRelease); the page keeps the chart's 127.0.0.1, which
    // port-forward reaches as on a real node.
    await installRelease(home, release, ns, 'debug.enabled=true', `watchNamespace=${ns}`);
    await kubectl(['rollout', 'status', '-n', ns, `deploy/${release}`, '--timeout=180s'], { check: true });
    demo = new ClusterUnderTest(clientsOf(inject('kubeconfig')), ns, 'demo');
    await demo.create({ replicas: 1 });
    await demo.settled(1);
    url = await portForward();
    browser = await launchChromium();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    forward?.kill();
    await demo?.delete().catch(() => undefined);
    await uninstallRelease(home, release, ns);
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it(
    'the page shows demo, then follows a scale 1 -> 5 -> 1 through joining, promoting and steady without reloading',
    { timeout: 400_000 },
    async () => {
      const index = await getJSON<{ objects: ObjectLine[] }>('/api/objects');
      const line = index.objects.find((o) => o.kind === 'EtcdCluster' && o.name === 'demo' && o.namespace === ns);
      expect(line?.state).toBe('steady');
      const page: Page = await browser!.newPage({ viewport: { width: 1600, height: 1000 } });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      // Recorded inside the page, on this machine's clock, as each update is painted.
      await page.addInitScript(`
        window.applied = [];
        document.addEventListener('live:painted', (e) => window.applied.push({
          seq: e.detail.seq, at: Date.now(),
          state: document.querySelector('g.node.now > title')?.textContent ?? '',
        }));`);
      await page.goto(`${url}/objects/${line!.uid}`);
      await page.waitForSelector('g.node.now');
      expect(await page.locator('g.node.now > title').textContent()).toBe('cluster.steady');
      await expect.poll(() => page.locator('#status').textContent()).toBe('live');
      await page.screenshot({ path: path.join(ARTIFACTS, 'steady-1.png') });

      await demo.scale(5);
      await until(
        'the page to show a promoting member',
        async () => {
          const shown = await page.evaluate<Applied[]>('window.applied');
          return shown.some((a) => a.state.includes('promoting')) ? true : undefined;
        },
        Infinity,
        500,
      );
      await page.screenshot({ path: path.join(ARTIFACTS, 'promoting.png') });
      await demo.settled(5);
      await demo.scale(1);
      await demo.settled(1);
      const last = (await getJSON<{ object: { seq: number } }>(`/api/objects/${line!.uid}`)).object.seq;
      await page.waitForSelector(`body[data-seq="${last}"]`);
      await page.screenshot({ path: path.join(ARTIFACTS, 'steady-after.png') });

      const applied = await page.evaluate<Applied[]>('window.applied');
      const states = applied.map((a) => a.state);
      const first = (s: string): number => states.findIndex((x) => x.includes(s));
      expect(first('joining'), states.join(' > ')).toBeGreaterThanOrEqual(0);
      expect(first('promoting')).toBeGreaterThan(first('joining'));
      expect(states.at(-1)).toBe('cluster.steady');
      expect(states.some((s) => s.includes('scalingDown'))).toBe(true);
      // One page load for all of it.
      expect(await page.evaluate("performance.getEntriesByType('navigation').length")).toBe(1);
      expect(problems).toEqual([]);

      // The time from each step's commit to the journal to the page painting it.
      const { rows } = await getJSON<{ rows: TimelineRow[] }>(`/api/objects/${line!.uid}/timeline?steps=500`);
      const committed = new Map<number, number>();
      for (const r of rows) committed.set(r.seq, Math.max(committed.get(r.seq) ?? 0, Date.parse(r.writtenAt)));
      const lags = applied
        .filter((a) => committed.has(a.seq))
        .map((a) => a.at - committed.get(a.seq)!)
        .sort((a, b) => a - b);
      const at = (q: number): number => lags[Math.min(lags.length - 1, Math.ceil(q * lags.length) - 1)] ?? NaN;
      console.log(
        `live page, scale 1 -> 5 -> 1 through kubectl port-forward: ${lags.length} steps painted, ` +
          `commit -> painted median ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${lags.at(-1)} ms`,
      );
      expect(lags.length).toBeGreaterThan(10);
      await page.close();
    },
  );

  it('kubectl exec deploy/<release> -- etcd-operator journal demo tells the same story from inside the Pod', async () => {
    const out = await kubectl(
      ['exec', '-n', ns, `deploy/${release}`, '--', 'etcd-operator', 'journal', 'demo', '-n', ns],
      { check: true },
    );
    expect(out.stdout).toMatch(/scalingUp/);
    expect(out.stdout).toMatch(/scalingDown/);
    expect(out.stdout).toMatch(/steady/);
  });
});
