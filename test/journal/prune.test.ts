import { describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import { demo, member, step, tempDb } from './helpers.ts';

describe('journal: retention', () => {
  test('prune keeps the last N steps of each object and every step whose intent is still open', () => {
    const j = Journal.open(tempDb(), { retainSteps: 3 });
    try {
      // Step 2 asks for an intent that never gets an outcome; every other intent is answered.
      for (let seq = 1; seq <= 10; seq++) {
        const { intentIds } = j.recordStep(demo, step(`S${seq - 1}`, `S${seq}`, [{ type: 'tick', params: { seq } }]));
        if (seq !== 2) j.recordOutcome(demo, intentIds[0] ?? '', { ok: true });
      }
      j.recordStep(member(0), step('pending', 'bootstrapping'));

      const deleted = j.prune();
      expect(deleted).toBe(6 * 4); // steps 1 and 3..7, each an event, a transition, an intent and its outcome
      expect([...new Set(j.timeline({ uid: demo.uid }).map((r) => r.seq))]).toEqual([2, 8, 9, 10]);
      expect(j.openIntents()).toMatchObject([{ id: 'uid-demo:2:0', params: { seq: 2 } }]);
      expect(j.timeline({ uid: member(0).uid })).toHaveLength(2);
      expect(j.snapshot(demo.uid)?.seq).toBe(10);

      // Once answered, the old step goes at the next prune.
      j.recordOutcome(demo, 'uid-demo:2:0', { ok: true });
      j.prune();
      expect([...new Set(j.timeline({ uid: demo.uid }).map((r) => r.seq))]).toEqual([8, 9, 10]);
      expect(j.prune({ keep: 1 })).toBe(8);
      expect([...new Set(j.timeline({ uid: demo.uid }).map((r) => r.seq))]).toEqual([10]);
    } finally {
      j.close();
    }
  });
});
