/**
 * A journal written before the cluster machine was cut into concern modules is resumed by the
 * machine as it is now: every persisted snapshot in the fixture (value and context, as the
 * journal and status.observed keep them) resolves to the same state path, and the next event
 * gives the state and intents the old machine answered with.
 */
import { readFileSync } from 'node:fs';
import { transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import type { ClusterEvent } from '../../../machines/types.ts';
import { path } from '../harness.ts';

interface Step {
  readonly before: { readonly value: unknown; readonly context: unknown };
  readonly event: ClusterEvent;
  readonly after: string;
  readonly intents: readonly { readonly type: string; readonly params?: unknown }[];
}

const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/cluster-journal-before-cut.json', import.meta.url), 'utf8'),
) as { steps: Step[] };

describe('cluster machine: resumes a journal written before the cut', () => {
  it('the fixture covers every concern the cut moved', () => {
    const tops = new Set(fixture.steps.map((s) => path(s.before.value).split('.')[0]));
    for (const top of [
      'upgrading',
      'defragmenting',
      'recoveringSpace',
      'outOfSpace',
      'resizingVolumes',
      'volumesRefused',
    ])
      expect(tops).toContain(top);
  });

  it.each(fixture.steps.map((s) => [`${path(s.before.value)} + ${s.event.type} -> ${s.after}`, s] as const))(
    '%s',
    (_, step) => {
      const resumed = clusterMachine.resolveState({
        value: step.before.value as never,
        context: step.before.context as never,
      });
      expect(path(resumed.value)).toBe(path(step.before.value));
      const [next, actions] = transition(clusterMachine, resumed, step.event);
      expect(path(next.value)).toBe(step.after);
      expect(actions.map((a) => ({ type: a.type, params: a.params }))).toEqual(
        JSON.parse(JSON.stringify(step.intents)),
      );
    },
  );
});
