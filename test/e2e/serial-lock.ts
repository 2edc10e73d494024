/**
 * A lock across vitest's worker processes: a directory made with mkdir (atomic), holding the
 * holder's pid. The cluster-serial files take it so that they run one at a time while the unit
 * files run beside them in the same group (vitest.config.ts says why).
 *
 * A holder that died without letting go (its pid gone), or a file that ran before in this same
 * worker process and did not let go (its pid ours: one process runs one file at a time), is taken
 * over rather than waited for.
 */
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a lock dir may stay without its pid file before it counts as left by a dead taker. */
const NO_PID_MS = 10_000;

/** Takes the lock at `dir`, waiting for its holder; resolves to the function that lets it go. */
export async function takeLock(dir: string, pollMs = 250): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (abandoned(dir)) rmSync(dir, { recursive: true, force: true });
      else await sleep(pollMs);
      continue;
    }
    writeFileSync(path.join(dir, 'pid'), String(process.pid));
    return () => rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the lock's holder is gone (or is this process, from a file before) and cannot let go. */
function abandoned(dir: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(dir, 'pid'), 'utf8'));
  } catch {
    // Taken a moment ago and its pid not written yet, or its taker died in between.
    try {
      return Date.now() - statSync(dir).mtimeMs > NO_PID_MS;
    } catch {
      return false; // let go meanwhile: the next mkdir takes it
    }
  }
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
