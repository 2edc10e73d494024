/**
 * The debug page in a real browser: Debian's chromium (hack/system-deps.sh installs it), headless,
 * driven by playwright-core. Screenshots go to test/artifacts/debug-page/ (gitignored).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectView } from '../../../manager/debug/live-objects.ts';
import { CHROMIUM, hasChromium, launchChromium } from '../../chromium.ts';
import { ARTIFACTS, demoRef, servePage, type Served } from './helpers.ts';

if (!hasChromium)
  console.warn(`debug page browser tests skipped: no ${CHROMIUM} (hack/system-deps.sh installs it, as root)`);

let browser: Browser;
let served: Served;
const problems: string[] = [];
const pages: Page[] = [];
beforeAll(async () => {
  if (!hasChromium) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());
afterEach(async () => {
  // The pages first: their live connections would knock on the closed server.
  for (const page of pages.splice(0)) await page.close();
  problems.length = 0;
  await served?.close();
});

/** A tab that records every request leaving for elsewhere and every console error (a CSP refusal is one). */
async function tab(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  pages.push(page);
  page.on('request', (r) => {
    if (!r.url().startsWith(served.url)) problems.push(`request to ${r.url()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return page;
}

const nowState = (page: Page) => page.locator('g.node.now > title').textContent();
const newestStep = (page: Page) => page.locator('#steps > li').first();

/** The chart edge ids of the arrows marked `cls` (each arrow's classes read `edge e12 taken`). */
const edgesOf = (page: Page, cls: string) =>
  page.evaluate<string[]>(
    `[...new Set([...document.querySelectorAll('g.edge.${cls}')].map((g) => g.classList[1]))].sort()`,
  );

/** The chart's classes agree with the overlay the API computes: current state, path taken, what it waits for. */
async function expectPainted(page: Page): Promise<void> {
  const { object } = (await (await fetch(`${served.url}/api/objects/uid-demo`)).json()) as { object: ObjectView };
  const overlay = object.overlay!;
  expect(await nowState(page)).toBe(overlay.current);
  expect(await edgesOf(page, 'taken')).toEqual(Object.keys(overlay.edges).sort());
  expect(await edgesOf(page, 'waits')).toEqual([...overlay.waiting].sort());
}

describe.skipIf(!hasChromium)('debug page in chromium', () => {
  it('the object page shows the current state highlighted, then follows new transitions without reloading', async () => {
    served = await servePage();
    const page = await tab();
    await page.goto(`${served.url}/objects/uid-demo`);
    await page.waitForSelector('g.node.now');
    await page.waitForSelector('#steps > li[data-seq="16"]');
    expect(await nowState(page)).toBe('cluster.scalingUp.joining.awaitingStart');
    await expect.poll(() => page.locator('#status').textContent()).toBe('live');
    await expectPainted(page);
    expect(await page.locator('#step').textContent()).toBe('ScalingUp');
    await page.screenshot({ path: join(ARTIFACTS, 'object-before.png') });
    // The tests' own code runs as text in the page: the project's types have no DOM.
    await page.evaluate('window.loadedOnce = true');

    // The learner started: the cluster promotes it, asking for promoteLearner.
    const seq = served.step(
      'scalingUp.joining.awaitingStart',
      'scalingUp.joining.promoting.running',
      'etcd.members.listed',
      [{ type: 'promoteLearner', params: { member: 'demo-1' } }],
    );
    await page.waitForSelector(`body[data-seq="${seq}"]`);
    expect(await nowState(page)).toBe('cluster.scalingUp.joining.promoting.running');
    await expect.poll(() => newestStep(page).getAttribute('data-seq')).toBe(String(seq));
    const intent = newestStep(page).locator('li.intent');
    expect(await intent.locator('.kind').textContent()).toBe('promoteLearner');
    expect(await intent.locator('.outcome').textContent()).toBe('open');
    expect(await intent.locator('.why').textContent()).toBe(
      `why: etcd.members.listed in scalingUp.joining.awaitingStart (step #${seq})`,
    );
    expect(await page.locator('#problem').textContent()).toMatch(/waiting on intent promoteLearner/);

    served.journal.recordOutcome(demoRef, `uid-demo:${seq}:0`, { ok: true, result: { promoted: 'b2' } });
    await expect.poll(() => intent.locator('.outcome').textContent()).toMatch(/^ok \{promoted: b2\}/);
    served.step('scalingUp.joining.promoting.running', 'observing', 'effect.promoteLearner.succeeded');
    const last = served.step('observing', 'steady', 'etcd.members.listed');
    await page.waitForSelector(`body[data-seq="${last}"]`);
    expect(await nowState(page)).toBe('cluster.steady');
    await expectPainted(page);
    expect(await page.locator('#steps > li').count()).toBe(last);
    expect(await page.evaluate('window.loadedOnce')).toBe(true);
    expect(await page.evaluate("performance.getEntriesByType('navigation').length")).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'object-after.png') });
    expect(problems).toEqual([]);
  }, 60_000);

  it('the index lists the object and moves its line as it steps; older steps load on demand', async () => {
    served = await servePage();
    const page = await tab();
    await page.goto(`${served.url}/`);
    const row = page.locator('tr[data-uid="uid-demo"]');
    expect(await row.locator('td.state code').textContent()).toBe('scalingUp.joining.awaitingStart');
    expect(await row.locator('td.step').textContent()).toBe('ScalingUp');
    await expect.poll(() => page.locator('#status').textContent()).toBe('live');
    served.step('scalingUp.joining.awaitingStart', 'scalingUp.joining.promoting.running', 'etcd.members.listed', [
      { type: 'promoteLearner' },
    ]);
    await expect.poll(() => row.locator('td.state').textContent()).toBe('scalingUp.joining.promoting.running1 open');
    await page.screenshot({ path: join(ARTIFACTS, 'index.png') });

    // An object with more steps than a page: the newest 50 first, then the rest on demand.
    for (let i = 0; i < 60; i++)
      served.step(
        i % 2 ? 'scalingUp.joining.promoting.backingOff' : 'scalingUp.joining.promoting.running',
        i % 2 ? 'scalingUp.joining.promoting.running' : 'scalingUp.joining.promoting.backingOff',
        i % 2 ? 'timer.tick' : 'effect.promoteLearner.failed',
      );
    const object = await tab();
    await object.goto(`${served.url}/objects/uid-demo`);
    await object.waitForSelector('g.node.now');
    await expect.poll(() => object.locator('#steps > li').count()).toBe(50);
    await object.click('#older');
    await expect.poll(() => object.locator('#steps > li').count()).toBe(77);
    expect(await object.locator('#older').isHidden()).toBe(true);
    expect(await object.locator('#steps > li').last().getAttribute('data-seq')).toBe('1');
    expect(problems).toEqual([]);
  }, 60_000);
});
