/**
 * The charts `make generate` writes into docs/statecharts/: each machine's chart, and the
 * overlaid example docs/statecharts.md shows (a bootstrap journaled by the real Runner).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../journal/index.ts';
import { overlayInputFrom } from './from-journal.ts';
import { MACHINE_NAMES, machineChart } from './machines.ts';
import { renderChart } from './output.ts';
import { overlayOf } from './overlay.ts';

/** [path in the repo, content] of every generated chart. */
export async function renderStatechartFiles(): Promise<[string, string][]> {
  const files: [string, string][] = [];
  for (const name of MACHINE_NAMES) {
    files.push([`docs/statecharts/${name}.svg`, await renderChart(machineChart(name), 'svg')]);
  }
  files.push(['docs/statecharts/example-demo.svg', await renderExample()]);
  return files;
}

/** The example: `etcd-operator statechart demo --db` on the journal of a scripted bootstrap. */
async function renderExample(): Promise<string> {
  const { journalBootstrap } = await import('../test/statechart/bootstrap.ts');
  const dir = mkdtempSync(join(tmpdir(), 'statechart-example-'));
  const journal = Journal.open(join(dir, 'journal.db'));
  try {
    await journalBootstrap(journal);
    const { machine, input } = overlayInputFrom(journal, { name: 'demo', namespace: 'default' });
    const chart = machineChart(machine);
    return await renderChart(chart, 'svg', overlayOf(chart, input));
  } finally {
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
