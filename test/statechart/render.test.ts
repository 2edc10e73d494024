import { describe, expect, it } from 'vitest';
import type { AnyStateNode } from 'xstate';
import { toDirectedGraph } from 'xstate/graph';
import { toDot } from '../../statechart/dot.ts';
import { MACHINE_NAMES, machineChart, machineNamed } from '../../statechart/machines.ts';
import { renderChart } from '../../statechart/output.ts';

/** Every state node below the root, and every transition definition, walked from the machine object. */
function census(node: AnyStateNode): { states: AnyStateNode[]; transitions: number; targets: number } {
  const own = [...node.transitions.values()].flat().concat(node.always ?? []);
  const result = {
    states: [] as AnyStateNode[],
    transitions: own.length,
    targets: own.reduce((n, t) => n + (t.target?.length ?? 0), 0),
  };
  for (const child of Object.values(node.states)) {
    const sub = census(child);
    result.states.push(child, ...sub.states);
    result.transitions += sub.transitions;
    result.targets += sub.targets;
  }
  return result;
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe.each(MACHINE_NAMES)('statechart: the %s machine', (name) => {
  const machine = machineNamed(name);
  const found = census(machine.root);
  const chart = machineChart(name);

  it('charts every state and every transition the machine defines', () => {
    const graphNodes = (n: ReturnType<typeof toDirectedGraph>): number =>
      1 + n.children.reduce((s, c) => s + graphNodes(c), 0);
    expect(found.states.length).toBeGreaterThan(10);
    expect(chart.states.length).toBe(graphNodes(toDirectedGraph(machine)) - 1);
    expect(chart.states.map((s) => s.id).sort()).toEqual(found.states.map((s) => s.id).sort());
    expect(chart.edges.length).toBe(found.transitions);
  });

  it('draws a box or a titled cluster per state, and an edge per transition target', async () => {
    const dot = toDot(chart);
    for (const s of found.states) {
      const group = Object.keys(s.states).length > 0;
      expect(dot).toContain(group ? `subgraph "cluster_${s.id}"` : `"${s.id}" [label=<<B>${s.key}</B>`);
    }
    // One arrow per target, one from each compound state's title to its initial state, one from the start dot.
    const compound = found.states.filter((s) => s.type === 'compound').length;
    const svg = await renderChart(chart, 'svg');
    expect(count(svg, 'class="edge"')).toBe(found.targets + compound + 1);
    expect(count(svg, 'class="node"')).toBe(found.states.length + 2);
  });

  it('with edgeClasses, marks each SVG arrow of a transition with its chart edge id (the live page finds them so)', async () => {
    const svg = await renderChart(chart, 'svg', undefined, { edgeClasses: true });
    for (const e of chart.edges) expect(count(svg, `class="edge ${e.id}"`), e.id).toBe(e.targets.length);
  });

  it('labels transitions with their event and guard, and shows the intents they emit', () => {
    const dot = toDot(chart);
    const intents = new Set([...chart.states, ...chart.edges].flatMap((x) => x.intents));
    expect(intents.size).toBeGreaterThan(0);
    for (const intent of intents) expect(dot).toContain(`<B>${intent}`);
    for (const e of chart.edges.filter((x) => x.targets.length > 0)) {
      if (e.event) expect(dot).toContain(e.event);
      if (e.guard) expect(dot).toContain(`[${e.guard.replace(/&/g, '&amp;')}]`);
    }
    for (const s of chart.states.filter((x) => x.intents.length > 0)) {
      expect(dot).toContain(`entry / <B>${s.intents.join(', ')}</B>`);
    }
  });

  it("shows describe's step for every top-level state", () => {
    const dot = toDot(chart);
    for (const s of chart.states.filter((x) => x.parent === null)) expect(dot).toContain(`Step: ${s.step}`);
  });
});
