import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Journal } from '../../journal/index.ts';

const run = promisify(execFile);
const cli = join(import.meta.dirname, '../../manager/cli.ts');
const dir = mkdtempSync(join(tmpdir(), 'cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the real command line; returns its output and exit code. */
async function etcdOperator(...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args]);
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

describe('etcd-operator command line', () => {
  it("prints a cluster's timeline from the journal", async () => {
    const db = join(dir, 'journal.db');
    const j = Journal.open(db);
    const ref = { uid: 'u1', kind: 'EtcdCluster' as const, namespace: 'default', name: 'demo' };
    j.recordStep(ref, {
      machine: 'cluster',
      event: { type: 'k8s.cluster.updated', at: 1_700_000_000_000 },
      from: 'pending',
      to: { bootstrapping: 'seeding' },
      state: {},
      intents: [{ type: 'ensureServices', params: { cluster: 'demo' } }],
    });
    j.close();
    const { code, out } = await etcdOperator('journal', 'demo', '--db', db);
    expect(code).toBe(0);
    expect(out).toContain('k8s.cluster.updated');
    expect(out).toContain('ensureServices');
  });

  it('says what it is and refuses unknown commands with the usage', async () => {
    expect((await etcdOperator('version')).out).toMatch(/^etcd-operator \d+\.\d+\.\d+ \(node v24\./);
    const bad = await etcdOperator('frobnicate');
    expect(bad.code).toBe(2);
    expect(bad.out).toContain("unknown command 'frobnicate'");
    expect(bad.out).toContain('journal NAME');
  });
});
