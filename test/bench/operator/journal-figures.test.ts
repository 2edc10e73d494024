import { afterEach, describe, expect, test } from 'vitest';
import { Journal } from '../../../journal/journal.ts';
import { demo, step, tempDb } from '../../journal/helpers.ts';
import { eventToIntent, retries, rowsOf, trace } from './journal-figures.ts';
import { percentile, spread } from './poll.ts';

const open: Journal[] = [];
afterEach(() => {
  for (const j of open.splice(0)) j.close();
});

/** A journal with: addLearner asked 40 ms after its event, refused, asked again, done; and a step with no intents. */
function written(): { path: string; t0: number } {
  const path = tempDb();
  const j = Journal.open(path);
  open.push(j);
  const t0 = Date.now();
  const first = j.recordStep(
    demo,
    step(
      'observing',
      'addingLearner',
      [{ type: 'addLearner' }, { type: 'createMember' }],
      new Date(t0 - 40).toISOString(),
    ),
  );
  j.recordOutcome(demo, first.intentIds[0]!, { ok: false, code: 'ERR_ETCD_UNHEALTHY', message: 'unhealthy cluster' });
  j.recordStep(demo, step('addingLearner', 'backingOff', [], new Date(t0).toISOString(), 'effect.addLearner.failed'));
  const again = j.recordStep(
    demo,
    step('backingOff', 'addingLearner', [{ type: 'addLearner' }], new Date().toISOString(), 'timer.tick'),
  );
  j.recordOutcome(demo, again.intentIds[0]!, { ok: true });
  return { path, t0 };
}

describe('operator bench: what the journal says', () => {
  test('event-to-intent counts each step with intents once, from the event time to its first intent row', () => {
    const { path } = written();
    const e2i = eventToIntent(rowsOf(path, demo.namespace));
    expect(e2i.steps).toBe(2);
    expect(e2i.max).toBeGreaterThanOrEqual(40);
    expect(e2i.max).toBeLessThan(5000);
  });

  test('a failed effect counts by kind and code, with the wait until the same intent is written again', () => {
    const { path } = written();
    const [refused, ...more] = retries(rowsOf(path, demo.namespace));
    expect(more).toEqual([]);
    expect(refused).toMatchObject({ intent: 'addLearner', code: 'ERR_ETCD_UNHEALTHY', count: 1 });
    expect(refused!.waitMs).toBeGreaterThanOrEqual(0);
  });

  test('the trace names each event with the state it led to and each outcome with its code', () => {
    const { path, t0 } = written();
    const rows = trace(rowsOf(path, demo.namespace), t0);
    expect(rows.map(([, object, entry, name, code]) => [object, entry, name, code])).toEqual([
      ['demo', 'event', 'k8s.cluster.updated -> addingLearner', undefined],
      ['demo', 'intent', 'addLearner', undefined],
      ['demo', 'intent', 'createMember', undefined],
      ['demo', 'outcome', 'addLearner', 'ERR_ETCD_UNHEALTHY'],
      ['demo', 'event', 'effect.addLearner.failed -> backingOff', undefined],
      ['demo', 'event', 'timer.tick -> addingLearner', undefined],
      ['demo', 'intent', 'addLearner', undefined],
      ['demo', 'outcome', 'addLearner', 'ok'],
    ]);
    expect(rowsOf(path, 'elsewhere')).toEqual([]);
  });

  test('spread gives a real run as the median and percentile the nearest rank', () => {
    expect(spread([30, 10, 20])).toEqual({ median: 20, min: 10, max: 30, runs: [30, 10, 20] });
    expect(spread([40, 10, 30, 20]).median).toBe(20);
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        0.99,
      ),
    ).toBe(99);
    expect(percentile([], 0.99)).toBe(0);
  });
});
