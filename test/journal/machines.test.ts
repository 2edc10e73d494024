import { initialTransition, transition } from 'xstate';
import type { AnyMachineSnapshot } from 'xstate';
import { describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import type { StateValue } from '../../journal/types.ts';
import { clusterMachine } from '../../machines/index.ts';
import type { ClusterEvent } from '../../machines/index.ts';
import { demo, tempDb } from './helpers.ts';

/** One runtime step: transition the machine and journal it; returns the new snapshot and intent ids. */
function step(journal: Journal, snapshot: AnyMachineSnapshot, event: ClusterEvent) {
  const [next, actions] = transition(clusterMachine, snapshot as never, event);
  const { intentIds } = journal.recordStep(demo, {
    machine: 'cluster',
    event,
    from: snapshot.value as StateValue,
    to: next.value,
    state: clusterMachine.getPersistedSnapshot(next),
    intents: actions.map((a) => ({ type: a.type, params: a.params as Record<string, unknown> })),
  });
  return { next, intentIds, actions };
}

describe('journal with the cluster machine', () => {
  test('a manager that dies after journaling a step resumes from the snapshot and recovers the same intent', () => {
    const path = tempDb();
    let journal = Journal.open(path);
    const [initial] = initialTransition(clusterMachine, {
      cluster: { namespace: demo.namespace, name: demo.name, uid: demo.uid },
    });
    const spec: ClusterEvent = {
      type: 'k8s.cluster.updated',
      at: 1_000,
      spec: { replicas: 3, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    };
    const listed = step(journal, initial, { type: 'k8s.members.listed', at: 900, members: [] });
    const first = step(journal, listed.next, spec);
    expect(first.actions.length).toBeGreaterThan(0);
    // The manager dies here: the intents are journaled, their effects never ran.
    journal.close();

    journal = Journal.open(path);
    try {
      const saved = journal.snapshot(demo.uid);
      const persisted = saved?.state as { value: never; context: never };
      const resumed = clusterMachine.resolveState({ value: persisted.value, context: persisted.context });
      expect(resumed.value).toEqual(first.next.value);
      expect(resumed.context).toEqual(first.next.context);
      const open = journal.openIntents(demo.uid);
      expect(open.map((o) => ({ type: o.type, params: o.params }))).toEqual(
        first.actions.map((a) => ({ type: a.type, params: a.params })),
      );

      // Recovery finds the effect done; the resumed machine takes the outcome and moves on.
      for (const o of open) journal.recordOutcome(demo, o.id, { ok: true, at: 1_050 });
      const outcome = { type: `effect.${open[0]?.type ?? ''}.succeeded`, at: 1_050 } as ClusterEvent;
      const second = step(journal, resumed, outcome);
      expect(second.next.value).not.toEqual(resumed.value);
      expect(journal.snapshot(demo.uid)?.seq).toBe(3);
      expect(journal.openIntents(demo.uid).map((o) => o.id)).toEqual(second.intentIds);
    } finally {
      journal.close();
    }
  });
});
