import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotReadyError, ProcessExitedError } from './errors.ts';
import { killLeftovers, startProcess, waitReady } from './process.ts';
import { until } from '../until.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'controlplane-process-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('control-plane process', () => {
  it('reports a process that exits before it is ready with the last lines of its log', async () => {
    const proc = await startProcess({
      name: 'broken',
      bin: '/bin/sh',
      args: ['-c', 'echo "bad flag --x" >&2; exit 3'],
      dir,
    });
    const err = await waitReady(proc, () => Promise.resolve('not yet'), 60_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProcessExitedError);
    expect((err as ProcessExitedError).code).toBe('ERR_PROCESS_EXITED');
    expect((err as Error).message).toContain('broken exited (code 3)');
    expect((err as Error).message).toContain('bad flag --x');
  });

  it('reports a process that never becomes ready with what the last check answered', async () => {
    const proc = await startProcess({
      name: 'slow',
      bin: '/bin/sh',
      args: ['-c', 'echo starting; exec sleep 60'],
      dir,
    });
    try {
      const err = await waitReady(proc, () => Promise.resolve('503: etcd not ok'), 300).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotReadyError);
      expect((err as Error).message).toContain('503: etcd not ok');
      expect((err as Error).message).toContain('starting');
    } finally {
      await proc.stop();
    }
  });

  it('keeps the output in <dir>/<name>.log across starts', async () => {
    for (const word of ['first', 'second']) {
      const proc = await startProcess({ name: 'talker', bin: '/bin/sh', args: ['-c', `echo ${word}`], dir });
      await proc.exited;
    }
    const log = await readFile(path.join(dir, 'talker.log'), 'utf8');
    expect(log).toMatch(/first[\s\S]*second/);
  });

  it('kills a process that ignores SIGTERM once the grace period is over', async () => {
    const proc = await startProcess({
      name: 'stubborn',
      bin: '/bin/sh',
      args: ['-c', 'trap "" TERM; echo up; while :; do sleep 1; done'],
      dir,
    });
    await waitReady(proc, () => Promise.resolve(proc.lastLines().includes('up') || 'no output yet'), 60_000);
    await proc.stop(200);
    expect(await proc.exited).toBe('signal SIGKILL');
  });

  it('ends a process an earlier run left behind in the same dir, and only that one', async () => {
    const sleeper = await startProcess({ name: 'leftover', bin: '/bin/sleep', args: ['60'], dir });
    // An earlier run's process has long been exec'd. Right after the spawn, the child may still be
    // a copy of this Node process (its cmdline node's), which is not ours to kill: wait for the exec.
    await until(
      "the leftover's exec",
      async () => ((await readFile(`/proc/${sleeper.pid}/cmdline`, 'utf8')).includes('/bin/sleep') ? true : undefined),
      Infinity,
      20,
    );
    await writeFile(path.join(dir, 'stranger.pid'), `${process.pid}\n`); // not one of our binaries
    await killLeftovers(dir, ['/bin/sleep']);
    expect(await sleeper.exited).toBe('signal SIGKILL');
    expect(process.kill(process.pid, 0)).toBe(true);
  }, 20_000); // killLeftovers waits out a grace period: close to vitest's 5 s default under load
});
