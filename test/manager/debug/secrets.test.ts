import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { REDACTED } from '../../../journal/index.ts';
import { demoRef, servePage, sse, type Served } from './helpers.ts';

let served: Served;
afterEach(async () => served.close());

/** Distinct markers, one per way a secret could travel. */
const SECRET = {
  eventField: 'SECRET-event-password-1f3a',
  envValue: 'SECRET-env-value-77c1',
  pem: '-----BEGIN PRIVATE KEY-----\nSECRET-pem-body-0b9e\n-----END PRIVATE KEY-----',
  result: 'SECRET-result-token-5d20',
  message: 'SECRET-bearer-c4e8',
  param: 'SECRET-intent-param-9a41',
  smuggled: 'SECRET-smuggled-param-e6b3',
};
const markers = Object.values(SECRET).map((s) => (s.includes('\n') ? 'SECRET-pem-body-0b9e' : s));

describe('debug page: nothing secret', () => {
  it("a Secret-looking value in an event, an intent's params or an outcome never appears on a page or in the stream", async () => {
    served = await servePage();
    const stream = await sse(`${served.url}/api/events?uid=uid-demo&after=0`);
    const index = await sse(`${served.url}/api/events?after=0`);

    // Event fields and outcomes are stored redacted; intent params holding a secret are refused whole.
    const seq = served.step(
      'scalingUp.joining.awaitingStart',
      'scalingUp.joining.promoting.running',
      'etcd.members.listed',
      [{ type: 'promoteLearner', params: { member: 'demo-1' } }],
    );
    served.journal.recordStep(demoRef, {
      machine: 'cluster',
      event: {
        type: 'k8s.secret.seen',
        at: Date.now(),
        rootPassword: SECRET.eventField,
        env: [{ name: 'ETCD_ROOT_PASSWORD', value: SECRET.envValue }],
        note: SECRET.pem,
      },
      from: 'scalingUp.joining.promoting.running',
      to: 'scalingUp.joining.promoting.running',
      state: {},
      intents: [],
    });
    expect(() =>
      served.step('scalingUp.joining.promoting.running', 'observing', 'x', [
        { type: 'createSecret', params: { password: SECRET.param } },
      ]),
    ).toThrow(/ERR_JOURNAL_SECRET|secret-looking/);
    served.journal.recordOutcome(demoRef, `uid-demo:${seq}:0`, {
      ok: false,
      code: 'ERR_PROMOTE',
      message: `etcd said 401 to Authorization: Bearer ${SECRET.message}`,
    });
    served.step(
      'scalingUp.joining.promoting.running',
      'scalingUp.joining.promoting.backingOff',
      'effect.promoteLearner.failed',
      [{ type: 'promoteLearner', params: { member: 'demo-1' } }],
    );
    served.journal.recordOutcome(demoRef, `uid-demo:${seq + 2}:0`, { ok: true, result: { token: SECRET.result } });

    // And were a secret in an intent's params somehow in the file (written past the journal), the page hides it too.
    const raw = new Database(served.journal.path);
    raw
      .prepare(`UPDATE entries SET data = ? WHERE intent_id = ? AND entry = 'intent'`)
      .run(JSON.stringify({ member: 'demo-1', peerPassword: SECRET.smuggled }), `uid-demo:${seq}:0`);
    raw.close();
    const late = await sse(`${served.url}/api/events?uid=uid-demo&after=0`);
    await late.next((e) => e.event === 'object');

    // The stream has told every write (they may come together): the last step, its intent answered.
    await stream.next((e) => {
      const view = (e.data as { view?: { seq: number; openIntents: number } }).view;
      return view?.seq === seq + 2 && view.openIntents === 0;
    });
    const pages = await Promise.all(
      [
        '/',
        '/objects/uid-demo',
        '/api/objects',
        '/api/objects/uid-demo',
        '/api/objects/uid-demo/timeline?steps=500',
        '/api/objects/uid-demo/chart.svg',
        '/static/object.js',
      ].map(async (path) => [path, await (await fetch(`${served.url}${path}`)).text()] as const),
    );
    const streams = [stream.raw(), index.raw(), late.raw()];
    for (const text of [...pages.map(([, t]) => t), ...streams])
      for (const marker of markers) expect(text).not.toContain(marker);

    // What was hidden shows as hidden, where it was.
    const timeline = pages.find(([p]) => p.includes('timeline'))?.[1] ?? '';
    expect(timeline).toContain(`"rootPassword":"${REDACTED}"`);
    expect(timeline).toContain(`"peerPassword":"${REDACTED}"`);
    expect(timeline).toContain(`Bearer ${REDACTED}`);
    expect(late.raw()).toContain(`"peerPassword":"${REDACTED}"`);
    for (const s of [stream, index, late]) await s.close();
  });
});
