import { afterEach, describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import { TimelineFormatter, compact, formatTimeline } from '../../journal/timeline.ts';
import { demo, member, step, tempDb } from './helpers.ts';

const T0 = Date.parse('2026-11-21T12:00:01.123Z');
const at = (ms: number): string => new Date(T0 + ms).toISOString();

let j: Journal;
afterEach(() => j.close());

describe('journal: timeline text', () => {
  test('each step reads as time, number, event and transition, with its intents and their outcomes beneath', () => {
    j = Journal.open(tempDb());
    j.recordStep(demo, {
      ...step('Pending', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }], at(0)),
      seq: 42,
    });
    j.recordOutcome(demo, 'uid-demo:42:0', { ok: true, at: at(333) });
    j.recordStep(
      demo,
      step(
        'Bootstrapping',
        'Bootstrapping',
        [
          { type: 'addLearner', params: { peerURL: 'http://demo-1.demo:2380' } },
          { type: 'createPod', params: { member: 'demo-1' } },
        ],
        at(2000),
        'etcd.member.ready',
      ),
    );
    j.recordOutcome(demo, 'uid-demo:43:0', {
      ok: false,
      code: 'ERR_ADD_LEARNER',
      message: 'too many learners',
      at: at(2500),
    });
    j.recordOutcome(demo, 'uid-demo:43:1', {
      ok: false,
      code: 'ERR_CREATE_POD',
      message: 'the image names no etcd version',
      retryable: false,
      at: at(2600),
    });

    expect(formatTimeline(j.timeline({ uid: demo.uid }))).toEqual([
      '2026-11-21T12:00:01.123Z #42 k8s.cluster.updated  Pending -> Bootstrapping',
      '    intent createMember{member: demo-0} #42.0 -> ok (+333ms)',
      '2026-11-21T12:00:03.123Z #43 etcd.member.ready  stays Bootstrapping',
      '    intent addLearner{peerURL: http://demo-1.demo:2380} #43.0 -> error ERR_ADD_LEARNER: too many learners (+500ms)',
      '    intent createPod{member: demo-1} #43.1 -> error ERR_CREATE_POD: the image names no etcd version (not retryable) (+600ms)',
    ]);
  });

  test('rows of several objects name their object; an outcome read after its step names the step that asked for it', () => {
    j = Journal.open(tempDb());
    j.recordStep(
      demo,
      step('Pending', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }], at(0)),
    );
    j.recordStep(member(0), {
      ...step('pending', 'bootstrapping', [{ type: 'createPod' }], at(10), 'k8s.member.created'),
      machine: 'member',
    });
    const fmt = new TimelineFormatter();
    expect(fmt.format(j.timeline({ uids: [demo.uid, member(0).uid] }))).toEqual([
      '2026-11-21T12:00:01.123Z EtcdCluster/demo #1 k8s.cluster.updated  Pending -> Bootstrapping',
      '    intent createMember{member: demo-0} #1.0 -> open',
      '2026-11-21T12:00:01.133Z EtcdMember/demo-0 #1 k8s.member.created  pending -> bootstrapping',
      '    intent createPod #1.0 -> open',
    ]);
    const last = j.lastLsn();
    j.recordOutcome(member(0), 'uid-demo-0:1:0', { ok: true, result: { pod: 'demo-0' }, at: at(900) });
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: true, at: at(1500), recovered: true });
    expect(fmt.format(j.timeline({ uids: [demo.uid, member(0).uid] }, { afterLsn: last }))).toEqual([
      '2026-11-21T12:00:02.023Z EtcdMember/demo-0 #1.0 createPod -> ok {pod: demo-0}  (asked at #1: k8s.member.created in pending)',
      '2026-11-21T12:00:02.623Z EtcdCluster/demo #1.0 createMember -> ok  (asked at #1: k8s.cluster.updated in Pending, recovered after a restart)',
    ]);
    expect(formatTimeline(j.timeline({ uid: demo.uid }))[1]).toBe(
      '    intent createMember{member: demo-0} #1.0 -> ok (+1.5s, recovered after a restart)',
    );
  });

  test('--json gives one object per row, each intent and outcome with the event and state that caused it', () => {
    j = Journal.open(tempDb());
    j.recordStep(
      demo,
      step('Pending', 'Bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }], at(0)),
    );
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: true, at: at(5) });
    const lines = formatTimeline(j.timeline({ uid: demo.uid }), { json: true });
    const rows = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => r.entry)).toEqual(['event', 'transition', 'intent', 'outcome']);
    const cause = { event: 'k8s.cluster.updated', from: 'Pending', to: 'Bootstrapping', at: at(0) };
    expect(rows[2]).toMatchObject({ object: demo, seq: 1, name: 'createMember', data: { member: 'demo-0' }, cause });
    expect(rows[3]).toMatchObject({ intentId: 'uid-demo:1:0', ok: true, at: at(5), cause });
  });

  test('long values are cut to one short line', () => {
    expect(compact({ peers: ['a', 'b'], note: 'two words', n: 3, on: true, none: null })).toBe(
      '{peers: [a, b], note: "two words", n: 3, on: true, none: null}',
    );
    expect(compact({ s: 'x'.repeat(200) }, 20)).toHaveLength(20);
  });
});
