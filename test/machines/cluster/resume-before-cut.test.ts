/**
 * A journal written before the cluster machine was cut into concern modules is resumed by the
 * machine as it is now: every persisted snapshot in the fixture (value and context, as the
 * journal and status.observed keep them) resolves to the same state path, and the next event
 * gives the state and intents the old machine answered with, but for one change made on
 * purpose since: a new cluster of more than one member whose seed was chosen, not created, now
 * starts whole (`starting`), its chosen seed the first of its members. A seed created goes on by
 * the seed path.
 */
import { readFileSync } from 'node:fs';
import { transition } from 'xstate';
import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import { peerURL } from '../../../machines/policy.ts';
import type { ClusterEvent } from '../../../machines/types.ts';
import { path } from '../harness.ts';

interface Step {
  readonly before: { readonly value: unknown; readonly context: unknown };
  readonly event: ClusterEvent;
  readonly after: string;
  readonly intents: readonly { readonly type: string; readonly params?: unknown }[];
}

/** The answer of a start: the chosen seed's name first, every member in the one initial cluster. */
function startsWhole(step: Step): Step | null {
  const c = step.before.context as {
    target?: { replicas: number; version: string };
    restore?: object;
    cluster: { namespace: string; name: string; peerTLS?: boolean };
  };
  const replicas = c.target?.replicas ?? 0;
  if (step.after !== 'bootstrapping.seeding.creatingSeed.running' || replicas < 2 || c.restore) return null;
  const [seed] = step.intents;
  const params = seed?.params as { ordinal: number; version: string };
  const names = Array.from({ length: replicas }, (_, i) => `${c.cluster.name}-${params.ordinal + i}`);
  return {
    ...step,
    after: 'bootstrapping.starting.creatingMember.running',
    intents: [
      {
        type: 'createMember',
        params: {
          member: names[0],
          ordinal: params.ordinal,
          bootstrap: true,
          initialCluster: names.map((n) => `${n}=${peerURL(c.cluster, n)}`).join(','),
          version: params.version,
        },
      },
    ],
  };
}

const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/cluster-journal-before-cut.json', import.meta.url), 'utf8'),
) as { steps: Step[] };

describe('cluster machine: resumes a journal written before the cut', () => {
  it('a seed chosen and not created becomes the first member of a start; a seed created stays a seed', () => {
    expect(fixture.steps.filter((s) => startsWhole(s) !== null)).toHaveLength(2);
    expect(fixture.steps.some((s) => path(s.before.value).startsWith('bootstrapping.seeding.awaitingSeed'))).toBe(true);
  });

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
    (_, recorded) => {
      const step = startsWhole(recorded) ?? recorded;
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
