/**
 * The debug page's latency, not a test: `node test/bench/live-page.ts [--steps N] [--screenshot PATH]`.
 *
 * A real journal (synchronous=FULL, as the manager writes it) holds demo's bootstrap, written by the
 * real Runner; the page is served over it and opened in chromium (headless, as the tests start it).
 * Then N transitions are journaled one after another (a promotion retried: promoteLearner fails
 * with ERR_LEARNER_NOT_IN_SYNC, backs off, runs again), and for each the time from just before
 * `recordStep` to the page having applied it (its `live:applied` event) and to the next frame
 * (`live:painted`) is taken, both on this machine's clock. The same again once the object has
 * 1,000 more steps. Also: the server's render of each machine's chart (once per process) and of
 * the overlaid SVG, the object API and the page's load. Writes test/bench/results/live-page.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import type { Page } from 'playwright-core';
import { Journal, type Intent } from '../../journal/index.ts';
import { serveDebugPage } from '../../manager/debug/server.ts';
import { MACHINE_NAMES } from '../../statechart/index.ts';
import { renderSvg } from '../../statechart/render.ts';
import { launchChromium } from '../chromium.ts';
import { demoRef, journalBootstrap } from '../statechart/bootstrap.ts';

const { values } = parseArgs({ options: { steps: { type: 'string' }, screenshot: { type: 'string' } } });
const N = Number(values.steps ?? 100);
const now = (): number => performance.timeOrigin + performance.now();
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
  return { n: s.length, median: at(0.5), p99: at(0.99), max: s.at(-1) ?? NaN, min: s[0] ?? NaN };
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

const dir = mkdtempSync(join(tmpdir(), 'live-page-bench-'));
const journal = Journal.open(join(dir, 'journal.db'));
await journalBootstrap(journal);
const served = await serveDebugPage({
  host: '127.0.0.1',
  port: 0,
  source: { current: journal, watch: (l) => journal.watch(l) },
  log: pino({ level: 'warn' }),
});
const browser = await launchChromium();

const running = 'scalingUp.joining.promoting.running';
const backingOff = 'scalingUp.joining.promoting.backingOff';
const context = (journal.snapshot(demoRef.uid)?.state as { context?: unknown }).context;
let stage = 'scalingUp.joining.awaitingStart';
let clock = Date.now();
/** Journals the next step of the retry loop; returns its intent's id when it asked for one. */
function nextStep(): string | undefined {
  const first = stage === 'scalingUp.joining.awaitingStart';
  const to = stage === running ? backingOff : running;
  const event = first ? 'etcd.members.listed' : to === running ? 'timer.tick' : 'effect.promoteLearner.failed';
  const intents: Intent[] = to === running ? [{ type: 'promoteLearner', params: { member: 'demo-1' } }] : [];
  const { seq, intentIds } = journal.recordStep(demoRef, {
    machine: 'cluster',
    event: { type: event, at: (clock = Math.max(clock + 1, Date.now())) },
    from: stage,
    to,
    state: { value: to, context },
    intents,
  });
  stage = to;
  return intents.length ? intentIds[0] : `step ${seq}`;
}

/** Opens the object's page, listening for its updates; resolves with how long the load took. */
async function open(): Promise<{ page: Page; loadMs: number }> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  // Run as the page's own code would be; the page's CSP refuses eval, which waitForFunction needs.
  await page.addInitScript(`
    window.benchTimes = { applied: [], painted: [] };
    const waiters = [];
    const now = () => performance.timeOrigin + performance.now();
    document.addEventListener('live:applied', (e) => window.benchTimes.applied.push({ lsn: e.detail.lsn, t: now() }));
    document.addEventListener('live:painted', (e) => {
      window.benchTimes.painted.push({ lsn: e.detail.lsn, t: now() });
      for (const w of waiters.splice(0)) (e.detail.lsn >= w.lsn ? w.resolve : (x) => waiters.push(x))(w);
    });
    window.benchPainted = (lsn) =>
      new Promise((resolve) =>
        window.benchTimes.painted.some((x) => x.lsn >= lsn) ? resolve() : waiters.push({ lsn, resolve }),
      );
  `);
  const start = now();
  await page.goto(`${served.url}/objects/uid-demo`);
  await page.waitForSelector('g.node.now');
  await page.locator('#status', { hasText: 'live' }).waitFor();
  return { page, loadMs: now() - start };
}

/** Journals `count` writes (steps, and each step's outcome), each once the page painted the one before. */
async function measure(page: Page, count: number, screenshotAt?: number) {
  const sent: { lsn: number; t: number; transition: boolean }[] = [];
  for (let i = 0; i < count; i++) {
    const t = now();
    const intent = nextStep();
    sent.push({ lsn: journal.lastLsn(), t, transition: true });
    await page.evaluate(`window.benchPainted(${journal.lastLsn()})`);
    if (intent?.includes(':')) {
      const t2 = now();
      journal.recordOutcome(demoRef, intent, {
        ok: false,
        code: 'ERR_LEARNER_NOT_IN_SYNC',
        message: 'etcdserver: can only promote a learner member which is in sync with leader',
      });
      sent.push({ lsn: journal.lastLsn(), t: t2, transition: false });
      await page.evaluate(`window.benchPainted(${journal.lastLsn()})`);
    }
    if (i + 1 === screenshotAt && values.screenshot) {
      mkdirSync(dirname(values.screenshot), { recursive: true });
      await page.waitForTimeout(1100); // the highlight's 1 s animation ends
      await page.screenshot({ path: values.screenshot });
    }
  }
  const times = await page.evaluate<{ applied: { lsn: number; t: number }[]; painted: { lsn: number; t: number }[] }>(
    'window.benchTimes',
  );
  const latency = (kind: 'applied' | 'painted', which: (s: (typeof sent)[number]) => boolean) =>
    stats(sent.filter(which).map((s) => (times[kind].find((x) => x.lsn >= s.lsn)?.t ?? NaN) - s.t));
  return {
    transitions: { applied: latency('applied', (s) => s.transition), painted: latency('painted', (s) => s.transition) },
    everyWrite: { applied: latency('applied', () => true), painted: latency('painted', () => true) },
  };
}

// Each machine's chart is laid out once per process, when a page first asks for it.
const renders: Record<string, number> = {};
let start = now();
await renderSvg('digraph { a }');
renders['Graphviz WebAssembly, loaded once'] = now() - start;
for (const name of MACHINE_NAMES) {
  start = now();
  await served.live.chartSvg(name);
  renders[`chart of the ${name} machine`] = now() - start;
}

const first = await open();
const small = await measure(first.page, N, 7);
const stepsSmall = journal.snapshot(demoRef.uid)?.seq ?? 0;
await first.page.close();

// The same object with 1,000 more steps: the page loads the newest 50 and the overlay counts all.
for (let i = 0; i < 1000; i++) nextStep();
const big = await open();
start = now();
await (await fetch(`${served.url}/api/objects/uid-demo`)).json();
const apiMs = now() - start;
const large = await measure(big.page, N);
const stepsLarge = journal.snapshot(demoRef.uid)?.seq ?? 0;
await big.page.close();

// The alternative to moving classes: lay out the overlaid chart again (as the CLI does) at each step.
start = now();
await served.live.overlaySvg(demoRef.uid);
renders[`overlaid SVG of demo at ${stepsLarge} steps`] = now() - start;

const result = {
  at: new Date().toISOString(),
  node: process.version,
  chromium: browser.version(),
  loadavg: loadavg().map((l) => Number(l.toFixed(2))),
  transitions: N,
  small: { steps: stepsSmall, pageLoadMs: first.loadMs, ...small },
  large: { steps: stepsLarge, pageLoadMs: big.loadMs, objectApiMs: apiMs, ...large },
  serverRenderMs: renders,
};
await browser.close();
await served.close();
journal.close();
rmSync(dir, { recursive: true, force: true });

const line = (label: string, s: ReturnType<typeof stats>) =>
  `  ${label.padEnd(46)} median ${ms(s.median)}, p99 ${ms(s.p99)}, max ${ms(s.max)} (n=${s.n})`;
console.log(`live page: ${N} transitions, chromium ${result.chromium}, load average ${result.loadavg.join(' ')}`);
for (const [name, r] of [
  [`object at ${stepsSmall} steps`, result.small],
  [`object at ${stepsLarge} steps`, result.large],
] as const) {
  console.log(`${name}: page load ${ms(r.pageLoadMs)}`);
  console.log(line('journal append -> page applied (transitions)', r.transitions.applied));
  console.log(line('journal append -> next frame painted', r.transitions.painted));
  console.log(line('every write (outcomes too) -> painted', r.everyWrite.painted));
}
console.log(`object API at ${stepsLarge} steps: ${ms(apiMs)}`);
for (const [what, t] of Object.entries(renders)) console.log(`server render, ${what}: ${ms(t)}`);
const out = join(import.meta.dirname, 'results', 'live-page.json');
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${out}`);
