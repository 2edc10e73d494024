import { afterEach, describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import type { JournalChange } from '../../journal/types.ts';
import { demo, member, step, tempDb } from './helpers.ts';

let j: Journal;
afterEach(() => j.close());

const at = (s: number): string => new Date(Date.parse('2026-11-21T12:00:00Z') + s * 1000).toISOString();

describe('journal: watch tells each committed write', () => {
  test('a step arrives as its rows in lsn order, as timeline reads them; an outcome as its one row', () => {
    j = Journal.open(tempDb());
    const heard: JournalChange[] = [];
    j.watch((c) => heard.push(c));
    j.recordStep(demo, step('pending', 'bootstrapping', [{ type: 'createMember', params: { member: 'demo-0' } }]));
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: true });
    expect(heard.map((c) => (c.kind === 'appended' ? c.rows.map((r) => `${r.entry}:${r.name}`) : c))).toEqual([
      ['event:k8s.cluster.updated', 'transition:cluster', 'intent:createMember'],
      ['outcome:createMember'],
    ]);
    const all = heard.flatMap((c) => (c.kind === 'appended' ? c.rows : []));
    expect(all).toEqual(j.timeline({ uid: demo.uid }));
  });

  test('a refused write tells nothing; a duplicate outcome appends nothing; forget tells the uid; unwatch stops it', () => {
    j = Journal.open(tempDb());
    const heard: JournalChange[] = [];
    const unwatch = j.watch((c) => heard.push(c));
    j.recordStep(demo, step('pending', 'bootstrapping', [{ type: 'createMember' }]));
    heard.length = 0;
    expect(() => j.recordStep(demo, { ...step('a', 'b'), seq: 1 })).toThrow(/ERR_JOURNAL_SEQUENCE|not after/);
    expect(() =>
      j.recordStep(demo, step('a', 'b', [{ type: 'createSecret', params: { password: 'hunter2' } }])),
    ).toThrow();
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: true });
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: false, code: 'ERR_X', message: 'late' });
    expect(heard).toHaveLength(1);
    j.forget(demo.uid);
    expect(heard.at(-1)).toEqual({ kind: 'forgotten', uid: demo.uid });
    unwatch();
    j.recordStep(demo, step('pending', 'bootstrapping'));
    expect(heard).toHaveLength(2);
  });

  test('a watcher that throws fails neither the write nor the other watchers', () => {
    j = Journal.open(tempDb());
    let told = 0;
    j.watch(() => {
      throw new Error('boom');
    });
    j.watch(() => told++);
    expect(j.recordStep(demo, step('pending', 'bootstrapping')).seq).toBe(1);
    expect(told).toBe(1);
  });
});

describe('journal: overview and pages of steps', () => {
  test('each object with the step that moved it into its state, its last error and its open intents', () => {
    j = Journal.open(tempDb());
    j.recordStep(demo, step('pending', 'bootstrapping', [{ type: 'createMember' }], at(0)));
    j.recordOutcome(demo, 'uid-demo:1:0', { ok: false, code: 'ERR_CREATE_MEMBER', message: 'no', at: at(1) });
    j.recordStep(demo, step('bootstrapping', 'bootstrapping', [{ type: 'createMember' }], at(2)));
    const m = member(0);
    j.recordStep(m, { ...step('pending', 'pending', [], at(3)), machine: 'member' });

    const [cluster, first] = j.overview();
    expect(cluster).toMatchObject({
      ref: demo,
      stage: 'bootstrapping',
      seq: 2,
      entered: { seq: 1, at: at(0) },
      lastError: { seq: 1, intent: 'createMember', code: 'ERR_CREATE_MEMBER', message: 'no', at: at(1), current: true },
      openIntents: 1,
    });
    expect(first).toMatchObject({ ref: m, entered: null, lastError: null, openIntents: 0 });

    j.recordOutcome(demo, 'uid-demo:2:0', { ok: true, at: at(4) });
    const [after] = j.overview(demo.uid);
    expect([after?.lastError?.current, after?.openIntents]).toEqual([false, 0]);
  });

  test('beforeSeq with afterSeq reads one page of older steps', () => {
    j = Journal.open(tempDb());
    for (let i = 0; i < 10; i++) j.recordStep(demo, step(`s${i}`, `s${i + 1}`));
    const page = j.timeline({ uid: demo.uid }, { afterSeq: 4, beforeSeq: 8 });
    expect([...new Set(page.map((r) => r.seq))]).toEqual([5, 6, 7]);
  });
});
