import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal, type ObjectRef } from '../../journal/index.ts';
import { toDot } from '../../statechart/dot.ts';
import { overlayInputFrom } from '../../statechart/from-journal.ts';
import { machineChart } from '../../statechart/machines.ts';
import type { Chart } from '../../statechart/model.ts';
import { overlayOf } from '../../statechart/overlay.ts';
import { demoRef, journalBootstrap } from './bootstrap.ts';

let dir: string;
let journal: Journal;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'statechart-'));
  journal = Journal.open(join(dir, 'journal.db'));
});
afterEach(() => {
  journal.close();
  rmSync(dir, { recursive: true, force: true });
});

const ref: ObjectRef = { uid: 'uid-x', kind: 'EtcdCluster', namespace: 'default', name: 'x' };
let at = 1_000;
const step = (event: string, from: string, to: string) =>
  journal.recordStep(ref, {
    machine: 'cluster',
    event: { type: event, at: (at += 10) },
    from,
    to,
    state: {},
    intents: [],
  });

/** The chart's edge from the state at `from` (a path) to the state at `to`, on `event` ('' for always). */
function edge(chart: Chart, from: string, to: string, event = ''): string {
  const id = (path: string) => chart.states.find((s) => s.path === path)?.id;
  const found = chart.edges.find(
    (e) => e.source === id(from) && e.targets.includes(id(to) ?? '?') && e.event === event,
  );
  if (!found) throw new Error(`no edge ${from} -> ${to} on '${event}'`);
  return found.id;
}

const seeding = 'bootstrapping.seeding';
const services = `${seeding}.creatingServices`;

describe('statechart overlay: the journal drawn over the chart', () => {
  it('marks exactly the journaled transitions, with counts and the last steps numbered', () => {
    step('k8s.members.listed', 'pending', 'pending');
    step('k8s.cluster.updated', 'pending', `${services}.running`);
    step('effect.ensureServices.failed', `${services}.running`, `${services}.backingOff`);
    step('timer.tick', `${services}.backingOff`, `${services}.running`);
    step('effect.ensureServices.failed', `${services}.running`, `${services}.backingOff`);
    const chart = machineChart('cluster');
    const overlay = overlayOf(chart, {
      ...overlayInputFrom(journal, { name: 'x', namespace: 'default' }).input,
      last: 2,
    });
    const failed = edge(chart, `${services}.running`, `${services}.backingOff`, 'effect.ensureServices.failed');
    expect(Object.fromEntries(overlay.edges)).toEqual({
      [edge(chart, 'pending', 'deciding')]: { count: 1, order: [] },
      [edge(chart, 'deciding', seeding)]: { count: 1, order: [] },
      [failed]: { count: 2, order: [2] },
      [edge(chart, `${services}.backingOff`, `${services}.running`)]: { count: 1, order: [1] },
    });
    expect(overlay.current).toBe(chart.states.find((s) => s.path === `${services}.backingOff`)?.id);
    expect(overlay.stays.get('cluster.pending')).toBe(1);
    expect(overlay.waiting).toEqual([edge(chart, `${services}.backingOff`, `${services}.running`)]);
    expect(overlay.problem).toBeNull();

    // In the DOT, the taken edges and only they are orange; the current state is filled.
    const taken = toDot(chart, overlay)
      .split('\n')
      .filter((l) => l.includes('-> ') && l.includes('color="#c2410c"'));
    expect(taken).toHaveLength(4);
    expect(toDot(chart, overlay)).toContain(`"${overlay.current}" [label=<<B>backingOff</B>`);
  });

  it('names an intent still open, then a failed outcome, as the problem', () => {
    const running = `${services}.running`;
    const { intentIds } = journal.recordStep(ref, {
      machine: 'cluster',
      event: { type: 'k8s.cluster.updated', at: 1 },
      from: 'pending',
      to: running,
      state: {},
      intents: [{ type: 'ensureServices', params: { cluster: 'x' } }],
    });
    const problem = () => overlayInputFrom(journal, { name: 'x', namespace: 'default' }).input.problem;
    expect(problem()).toBe('waiting on intent ensureServices (asked at step #1): no outcome yet');
    journal.recordOutcome(ref, intentIds[0] ?? '', { ok: false, code: 'ERR_X', message: 'boom' });
    expect(problem()).toBe('last outcome: ensureServices (step #1) failed: ERR_X boom');
  });

  it('counts a step the chart cannot explain as unmatched instead of drawing it', () => {
    step('k8s.cluster.updated', 'pending', 'noSuchState');
    step('k8s.cluster.updated', 'noSuchState', 'pending');
    const { input } = overlayInputFrom(journal, { name: 'x', namespace: 'default' });
    const overlay = overlayOf(machineChart('cluster'), input);
    expect(overlay.unmatched).toBe(2);
    expect(overlay.edges.size).toBe(0);
  });

  it('shows where a scale-up stopped, what it waits for and what describe says, from a Runner-written journal', async () => {
    await journalBootstrap(journal);
    const { machine, input } = overlayInputFrom(journal, { name: demoRef.name, namespace: demoRef.namespace });
    const chart = machineChart(machine);
    const overlay = overlayOf(chart, input);
    const awaiting = 'scalingUp.joining.awaitingStart';
    expect(chart.states.find((s) => s.id === overlay.current)?.path).toBe(awaiting);
    expect(overlay.now.message).toContain('waiting for learner demo-1 to start etcd');
    // It waits for the learner to start, or for it to be lost (the join's own way out).
    expect(overlay.waiting.toSorted()).toEqual(
      [edge(chart, 'scalingUp.joining', 'observing'), edge(chart, awaiting, 'scalingUp.joining.promoting')].toSorted(),
    );
    expect(overlay.unmatched).toBe(0);
    expect(Math.max(...[...overlay.edges.values()].flatMap((u) => u.order))).toBe(overlay.numbered);
  });
});
