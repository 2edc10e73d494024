import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'failpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const module = join(import.meta.dirname, '../../manager/failpoints.ts');

/** Runs a process that passes the given failpoints in order (`name` or `name@window`); resolves with how it ended. */
function pass(
  names: readonly string[],
  env: Record<string, string>,
): Promise<{ signal: string | null; stderr: string }> {
  const script = `const { failpoint } = await import(${JSON.stringify(module)}); for (const p of ${JSON.stringify(names)}) { const [n, w] = p.split('@'); failpoint(n, w === undefined ? undefined : () => w); }`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { env: { ...process.env, ...env } },
      (err, _out, stderr) => {
        resolve({ signal: (err as { signal?: string } | null)?.signal ?? null, stderr });
      },
    );
  });
}

describe('failpoints', () => {
  it('a clean run with a count file lists every failpoint reached, in order, and lives', async () => {
    const file = join(dir, 'clean.txt');
    const r = await pass(['before-journal-step', 'after-journal-step', 'after-effect', 'after-journal-step'], {
      ETCD_OPERATOR_FAILPOINT_COUNT: file,
    });
    expect(r.signal).toBeNull();
    expect(readFileSync(file, 'utf8')).toBe(
      'before-journal-step\nafter-journal-step\nafter-effect\nafter-journal-step\n',
    );
  });

  it('an armed run dies by SIGKILL at the n-th time its failpoint is reached, that one counted', async () => {
    const file = join(dir, 'armed.txt');
    const r = await pass(['after-journal-step', 'after-status', 'after-journal-step', 'after-outcome'], {
      ETCD_OPERATOR_FAILPOINT: 'after-journal-step:2',
      ETCD_OPERATOR_FAILPOINT_COUNT: file,
    });
    expect(r.signal).toBe('SIGKILL');
    expect(r.stderr).toContain('failpoint after-journal-step reached: SIGKILL');
    expect(readFileSync(file, 'utf8')).toBe('after-journal-step\nafter-status\nafter-journal-step\n');
  });

  it("the agent's upload failpoints, armed with SIGTERM, stop it as a Pod's deletion does", async () => {
    const r = await pass(['upload-created', 'upload-part', 'upload-part', 'upload-completed'], {
      ETCD_OPERATOR_FAILPOINT: 'upload-part:2',
      ETCD_OPERATOR_FAILPOINT_SIGNAL: 'SIGTERM',
    });
    expect(r.signal).toBe('SIGTERM');
    expect(r.stderr).toContain('failpoint upload-part reached: SIGTERM');
  });

  it('with windows, the count file names each window, and an armed window counts only the times reached in it', async () => {
    const { windowId } = await import('../../manager/failpoints.ts');
    const file = join(dir, 'windows.txt');
    const probe = 'member: voter -etcd.probe.answered-> voter []';
    const add = 'cluster: observing -k8s.cluster.changed-> scaling.adding [addLearner]';
    const r = await pass([`after-journal-step@${probe}`, `after-journal-step@${add}`, `after-journal-step@${probe}`], {
      ETCD_OPERATOR_FAILPOINT: 'after-journal-step:1',
      ETCD_OPERATOR_FAILPOINT_WINDOW: windowId(add),
      ETCD_OPERATOR_FAILPOINT_COUNT: file,
    });
    expect(r.signal).toBe('SIGKILL');
    expect(r.stderr).toContain(`failpoint after-journal-step reached in ${add}: SIGKILL`);
    expect(readFileSync(file, 'utf8')).toBe(
      `after-journal-step\t${windowId(probe)}\t${probe}\nafter-journal-step\t${windowId(add)}\t${add}\n`,
    );
  });

  it('names a state as a path, parallel regions side by side', async () => {
    const { stateName, stepWindow } = await import('../../manager/failpoints.ts');
    expect(stateName('observing')).toBe('observing');
    expect(stateName({ upgrading: { awaitingMember: {} } })).toBe('upgrading.awaitingMember');
    expect(stateName({ a: 'x', b: { c: 'y' } })).toBe('a.x,b.c.y');
    expect(stepWindow('member', 'voter', 'k8s.pod.deleted', { replacing: 'removing' }, ['deletePod'])).toBe(
      'member: voter -k8s.pod.deleted-> replacing.removing [deletePod]',
    );
  });
});
