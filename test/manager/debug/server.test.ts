import { afterEach, describe, expect, it } from 'vitest';
import type { TimelineRow } from '../../../journal/index.ts';
import type { ObjectLine, ObjectView, TimelinePage } from '../../../manager/debug/live-objects.ts';
import { machineChart, overlayInputFrom, overlayOf, renderChart } from '../../../statechart/index.ts';
import { demoRef, servePage, sse, type Served } from './helpers.ts';

let served: Served;
afterEach(async () => served.close());

const get = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${served.url}${path}`);
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
};
const seqsOf = (rows: readonly TimelineRow[]) => [...new Set(rows.map((r) => r.seq))];
const awaiting = 'scalingUp.joining.awaitingStart';
const promoting = 'scalingUp.joining.promoting.running';

describe('debug page: the index and an object, over HTTP, from a journal the real Runner wrote', () => {
  it('lists each object with its state, step, since, last error and open intents', async () => {
    served = await servePage();
    const { objects, lsn } = await get<{ objects: ObjectLine[]; lsn: number }>('/api/objects');
    expect(lsn).toBe(served.journal.lastLsn());
    expect(objects).toEqual([
      expect.objectContaining({
        uid: 'uid-demo',
        kind: 'EtcdCluster',
        namespace: 'default',
        name: 'demo',
        state: awaiting,
        step: 'ScalingUp',
        seq: 16,
        sinceSeq: 15,
        openIntents: 0,
        running: null,
      }),
    ]);
    // The first ensureServices failed, then succeeded: an error, no longer current.
    expect(objects[0]?.lastError).toMatchObject({ seq: 2, code: 'ERR_ENSURE_SERVICES', current: false });
    expect(objects[0]?.message).toMatch(/waiting for learner demo-1 to start etcd/);

    const html = await fetch(`${served.url}/`);
    expect(html.headers.get('content-type')).toMatch(/text\/html/);
    expect(html.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
    expect(await html.text()).toContain('<script type="module" src="/static/index.js"></script>');
  });

  it("serves the object's page, its overlay as `statechart NAME --db` computes it, and the SVG that CLI draws", async () => {
    served = await servePage();
    const page = await fetch(`${served.url}/objects/uid-demo`);
    expect(await page.text()).toContain('<script type="module" src="/static/object.js"></script>');
    const { object } = await get<{ object: ObjectView }>('/api/objects/uid-demo');
    const { input } = overlayInputFrom(served.journal, { name: 'demo', namespace: 'default' });
    const chart = machineChart('cluster');
    const overlay = overlayOf(chart, input);
    expect(object.overlay).toEqual({
      ...overlay,
      edges: Object.fromEntries(overlay.edges),
      stays: Object.fromEntries(overlay.stays),
    });
    expect(object.overlay?.current).toBe(`cluster.${awaiting}`);

    const svg = await fetch(`${served.url}/api/objects/uid-demo/chart.svg`);
    expect(svg.headers.get('content-type')).toBe('image/svg+xml');
    expect(await svg.text()).toBe(await renderChart(chart, 'svg', overlay));
    // The live chart is the machine's, drawn once, its arrows classed with their edge ids.
    const live = await (await fetch(`${served.url}/api/charts/cluster.svg`)).text();
    for (const id of Object.keys(object.overlay?.edges ?? {})) expect(live).toContain(`class="edge ${id}"`);
  });

  it('pages the timeline by whole steps, newest first, down to the first', async () => {
    served = await servePage();
    const first = await get<TimelinePage>('/api/objects/uid-demo/timeline?steps=5');
    expect(seqsOf(first.rows)).toEqual([12, 13, 14, 15, 16]);
    expect(first.older).toBe(12);
    // A step's rows stay together: event, transition, intents, outcomes.
    expect(first.rows.filter((r) => r.seq === 12).map((r) => r.entry)).toEqual([
      'event',
      'transition',
      'intent',
      'outcome',
    ]);
    const all = [...first.rows];
    let older: number | null = first.older;
    while (older !== null) {
      const page: TimelinePage = await get<TimelinePage>(`/api/objects/uid-demo/timeline?steps=5&before=${older}`);
      all.unshift(...page.rows);
      older = page.older;
    }
    expect(all).toEqual(served.journal.timeline({ uid: demoRef.uid }));
  });

  it('is read-only, says what is not there, and says so while the manager has no journal open', async () => {
    served = await servePage();
    expect((await fetch(`${served.url}/api/objects`, { method: 'POST' })).status).toBe(405);
    expect((await fetch(`${served.url}/api/objects/nope`)).status).toBe(404);
    expect((await fetch(`${served.url}/api/charts/nope.svg`)).status).toBe(404);
    expect((await fetch(`${served.url}/static/../server.ts`)).status).toBe(404);
    expect((await fetch(`${served.url}/favicon.ico`)).status).toBe(204);
    await served.close();

    served = await servePage({ noJournal: true });
    const res = await fetch(`${served.url}/api/objects`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: expect.stringMatching(/no journal open yet/) as unknown });
  });
});

describe('debug page: server-sent events fed by the journal as it commits', () => {
  it("a new step arrives as its rows in order, with the object's new overlay; its outcome follows", async () => {
    served = await servePage();
    const stream = await sse(`${served.url}/api/events?uid=uid-demo&after=${served.journal.lastLsn()}`);
    const index = await sse(`${served.url}/api/events?after=${served.journal.lastLsn()}`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');

    const seq = served.step(awaiting, promoting, 'etcd.members.listed', [
      { type: 'promoteLearner', params: { member: 'demo-1' } },
    ]);
    const step = await stream.next((e) => e.event === 'object');
    const { rows, view } = step.data as { rows: TimelineRow[]; view: ObjectView };
    expect(rows.map((r) => `${r.seq} ${r.entry} ${r.name}`)).toEqual([
      '17 event etcd.members.listed',
      '17 transition cluster',
      '17 intent promoteLearner',
    ]);
    expect(step.id).toBe(String(rows.at(-1)?.lsn));
    expect(view.overlay?.current).toBe(`cluster.${promoting}`);
    expect(view.overlay?.problem).toMatch(/waiting on intent promoteLearner \(asked at step #17\)/);
    served.journal.recordOutcome(demoRef, `uid-demo:${seq}:0`, { ok: true });
    const outcome = await stream.next((e) => e.event === 'object');
    const after = outcome.data as { rows: TimelineRow[]; view: ObjectView };
    expect(after.rows.map((r) => `${r.entry} ${r.name} ${r.ok}`)).toEqual(['outcome promoteLearner true']);
    expect(Number(outcome.id)).toBeGreaterThan(Number(step.id));
    expect(after.view.overlay?.problem).toBeNull();

    // The index hears the object's line only, once per write.
    const line = await index.next((e) => e.event === 'object');
    expect(line.data).toMatchObject({ line: { uid: 'uid-demo', state: promoting, seq: 17, openIntents: 1 }, rows: [] });
    expect(await index.next((e) => e.event === 'object')).toMatchObject({ data: { line: { openIntents: 0 } } });

    // Writes in one tick come together, their rows in lsn order.
    served.step(promoting, 'observing', 'effect.promoteLearner.succeeded');
    served.step('observing', 'steady', 'etcd.members.listed');
    const both = (await stream.next((e) => e.event === 'object')).data as { rows: TimelineRow[] };
    expect(both.rows.map((r) => `${r.seq} ${r.entry}`)).toEqual([
      '18 event',
      '18 transition',
      '19 event',
      '19 transition',
    ]);
    await stream.close();
    await index.close();
  });

  it('a page that loaded before some writes is sent what it missed: from ?after=, or Last-Event-ID when it reconnects', async () => {
    served = await servePage();
    const loaded = served.journal.lastLsn();
    served.step(awaiting, promoting, 'etcd.members.listed');
    const late = await sse(`${served.url}/api/events?uid=uid-demo&after=${loaded}`);
    const missed = await late.next((e) => e.event === 'object');
    expect((missed.data as { rows: TimelineRow[] }).rows.map((r) => r.seq)).toEqual([17, 17]);
    await late.close();

    const again = await sse(`${served.url}/api/events?uid=uid-demo&after=0`, { 'last-event-id': String(loaded) });
    const resumed = await again.next((e) => e.event === 'object');
    expect((resumed.data as { rows: TimelineRow[] }).rows[0]?.lsn).toBe(loaded + 1);
    await again.close();

    // The index is sent every line again.
    const index = await sse(`${served.url}/api/events?after=${loaded}`);
    expect((await index.next()).event).toBe('objects');
    await index.close();
  });

  it('a forgotten object is gone from the index; a page far behind is told to load again', async () => {
    served = await servePage();
    const index = await sse(`${served.url}/api/events?after=${served.journal.lastLsn()}`);
    const far = await sse(`${served.url}/api/events?uid=uid-demo&after=${served.journal.lastLsn() + 10}`);
    expect((await far.next()).event).toBe('reset');
    served.journal.forget(demoRef.uid);
    expect(await index.next()).toMatchObject({ event: 'gone', data: { uid: 'uid-demo' } });
    await index.close();
    await far.close();
  });
});
