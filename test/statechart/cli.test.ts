import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../journal/index.ts';
import { runStatechartCommand } from '../../statechart/cli.ts';
import { journalBootstrap } from './bootstrap.ts';

let dir: string;
let db: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'statechart-cli-'));
  db = join(dir, 'journal.db');
  const journal = Journal.open(db);
  await journalBootstrap(journal);
  journal.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command with no journal in the environment; returns the exit code and what it printed. */
async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runStatechartCommand(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) }, {});
  return { code, out, err };
}

describe('etcd-operator statechart', () => {
  it('draws a machine as SVG by default, and as DOT or JSON when asked', async () => {
    expect((await run('member')).out).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*member machine[\s\S]*<\/svg>\n$/);
    expect((await run('cluster', '--format', 'dot')).out).toMatch(/^digraph "cluster" \{/);
    const json = JSON.parse((await run('cluster', '--format', 'json')).out) as { chart: { states: unknown[] } };
    expect(json.chart.states.length).toBeGreaterThan(10);
  });

  it('writes the chart of a journaled object to a file with -o', async () => {
    const file = join(dir, 'demo.json');
    expect(await run('demo', '--db', db, '--format', 'json', '-o', file)).toEqual({ code: 0, out: '', err: '' });
    const { overlay } = JSON.parse(readFileSync(file, 'utf8')) as { overlay: { current: string; object: string } };
    expect(overlay).toMatchObject({
      object: 'EtcdCluster default/demo',
      current: 'cluster.scalingUp.joining.awaitingStart',
    });
  });

  it('refuses an unknown machine, naming the ones it knows', async () => {
    const { code, err } = await run('pod');
    expect(code).toBe(2);
    expect(err).toContain(
      "unknown machine 'pod' (one of cluster, member, snapshot, schedule, roll, maintenance, volumes, recovery); to chart an EtcdCluster named so, give --db PATH",
    );
  });

  it('asks for --db when charting an object without a journal', async () => {
    const { code, err } = await run('demo', '--member', '0');
    expect(code).toBe(2);
    expect(err).toContain('charting demo needs the journal: give --db PATH');
  });

  it('says which objects the journal has when the one asked for is not there', async () => {
    const { code, err } = await run('nope', '--db', db);
    expect(code).toBe(1);
    expect(err).toContain(
      'no EtcdCluster or EtcdMember nope in namespace default in the journal (it has: EtcdCluster default/demo)',
    );
    expect((await run('demo', '--member', '7', '--db', db)).err).toContain('no member 7 of demo in namespace default');
  });

  it('fails clearly on a missing journal file, a bad format and --from-cluster', async () => {
    const cases: [string[], number, string][] = [
      [['demo', '--db', join(dir, 'missing.db')], 1, 'no journal at'],
      [['cluster', '--format', 'png'], 2, '--format must be one of svg, dot, json, not png'],
      [['demo', '--from-cluster'], 1, '--from-cluster is not available yet'],
    ];
    for (const [argv, code, message] of cases) {
      const result = await run(...argv);
      expect(result.code).toBe(code);
      expect(result.err).toContain(message);
    }
  });
});
