import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'failpoints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const module = join(import.meta.dirname, '../../manager/failpoints.ts');

/** Runs a process that passes the given failpoints in order; resolves with how it ended. */
function pass(
  names: readonly string[],
  env: Record<string, string>,
): Promise<{ signal: string | null; stderr: string }> {
  const script = `const { failpoint } = await import(${JSON.stringify(module)}); for (const n of ${JSON.stringify(names)}) failpoint(n);`;
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
});
