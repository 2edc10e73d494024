import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { takeLock } from '../e2e/serial-lock.ts';

const modulePath = path.join(import.meta.dirname, '..', 'e2e', 'serial-lock.ts');

const dirs: string[] = [];
const lockIn = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'serial-lock-'));
  dirs.push(dir);
  return path.join(dir, 'lock');
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('takeLock', () => {
  it('waits while another process holds it, and takes it once that one lets go', async () => {
    const lock = lockIn();
    // The holder: takes the lock, says so, and lets go when told (a line on its stdin).
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { takeLock } = await import(${JSON.stringify(modulePath)});
         const release = await takeLock(${JSON.stringify(lock)});
         console.log('held');
         process.stdin.once('data', () => { release(); console.log('let go'); process.exit(0); });`,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const said: string[] = [];
    const saw = (line: string) =>
      new Promise<void>((resolve) => {
        const check = () => (said.includes(line) ? resolve() : setTimeout(check, 10));
        check();
      });
    holder.stdout.on('data', (chunk: Buffer) => said.push(...chunk.toString().trim().split('\n')));
    await saw('held');
    const pending = takeLock(lock, 10);
    const first = await Promise.race([
      pending.then(() => 'taken'),
      new Promise((r) => setTimeout(() => r('waiting'), 300)),
    ]);
    holder.stdin.write('go\n');
    const release = await pending;
    await saw('let go');
    expect(first).toBe('waiting');
    release();
    expect(existsSync(lock)).toBe(false);
  });

  it('takes over a lock whose holder died without letting go', async () => {
    const lock = lockIn();
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid!;
    await new Promise((r) => child.on('exit', r));
    mkdirSync(lock);
    writeFileSync(path.join(lock, 'pid'), String(pid));
    const release = await takeLock(lock, 10);
    release();
  });

  it('takes over a lock this process left (a file before it in the same worker)', async () => {
    const lock = lockIn();
    await takeLock(lock, 10); // never let go
    const release = await takeLock(lock, 10);
    release();
    expect(existsSync(lock)).toBe(false);
  });
});
