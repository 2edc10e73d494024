/** Shared test helpers: temp journal paths, sample refs and steps, damage, and a writer child process. */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Interface } from 'node:readline';
import Database from 'better-sqlite3';
import type { ObjectRef, Step } from '../../journal/types.ts';
import type { WriterCommand } from './fixtures/writer.ts';

/** Temp dirs made by tempDb, removed once the test file that made them is done. */
const made = new Set<string>();

/**
 * Removes the temp dirs tempDb made: after every unit file (test/unit-setup.ts). A hook here
 * would be registered once per worker, for the first file only, now that unit files share
 * workers with their modules loaded once.
 */
export function removeTempDbs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}

/** A fresh journal path in its own temp directory, removed after the test file. */
export function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'etcd-operator-journal-'));
  made.add(dir);
  return join(dir, 'journal.db');
}

/** The EtcdCluster `demo` used across the tests. */
export const demo: ObjectRef = { uid: 'uid-demo', kind: 'EtcdCluster', namespace: 'default', name: 'demo' };

/** Member `index` of cluster `demo`. */
export function member(index: number, cluster = 'demo'): ObjectRef {
  return {
    uid: `uid-${cluster}-${index}`,
    kind: 'EtcdMember',
    namespace: 'default',
    name: `${cluster}-${index}`,
    cluster,
  };
}

/** A cluster step from `from` to `to` at `at`, asking for `intents`. */
export function step(
  from: string,
  to: string,
  intents: Step['intents'] = [],
  at = '2026-11-21T12:00:01.123Z',
  type = 'k8s.cluster.updated',
): Step {
  return { machine: 'cluster', event: { type, at }, from, to, state: { value: to, context: { replicas: 3 } }, intents };
}

/** Overwrites `bytes` in the middle of the file with garbage, page-aligned, as a bad volume would. */
export function scribble(path: string, bytes: number): void {
  const fd = openSync(path, 'r+');
  const at = Math.floor(statSync(path).size / 2 / 4096) * 4096;
  writeSync(fd, randomBytes(bytes), 0, bytes, at);
  closeSync(fd);
}

/** Ways a file gets damaged: 32 KiB of garbage in the middle (issue 14), or cut to half its size. */
export const DAMAGES = {
  '32 KiB of garbage in the middle': (path: string) => scribble(path, 32 * 1024),
  'truncated to half': (path: string) => truncateSync(path, Math.floor(statSync(path).size / 2)),
} as const;

/**
 * Damages the file of a journal that is open, as it would be found in a long-running manager:
 * another connection first checkpoints the WAL into the file (SQLite does every 1,000 pages), and
 * after the damage commits an unrelated change (the same user_version), so the open journal's next
 * read finds its page cache stale and reads the file (a 2 MB cache holds little of a real journal).
 */
export function damageWhileOpen(path: string, damage: (path: string) => void): void {
  const other = new Database(path);
  try {
    other.pragma('wal_checkpoint(TRUNCATE)');
    damage(path);
    other.pragma(`user_version = ${Number(other.pragma('user_version', { simple: true }))}`);
  } finally {
    other.close();
  }
}

/** A journal writer running in a child Node process. */
export class WriterProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  readonly #lines: AsyncIterator<string, undefined>;

  constructor(db: string) {
    this.child = spawn(process.execPath, [join(import.meta.dirname, 'fixtures', 'writer.ts'), db], { stdio: 'pipe' });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve(signal ?? code)));
    const rl: Interface = createInterface({ input: this.child.stdout });
    this.#lines = rl[Symbol.asyncIterator]();
  }

  /** The next JSON line the child printed. */
  async next(): Promise<Record<string, unknown>> {
    const line: IteratorResult<string, undefined> = await this.#lines.next();
    if (line.done) throw new Error(`writer process ended (${String(await this.exited)})`);
    return JSON.parse(line.value) as Record<string, unknown>;
  }

  /** Sends a command and returns its reply. */
  async send(cmd: WriterCommand): Promise<Record<string, unknown>> {
    this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
    return this.next();
  }

  /** Sends a command that ends in the child's own SIGKILL and waits until it is gone. */
  async crash(cmd: WriterCommand): Promise<NodeJS.Signals | number | null> {
    this.child.stdin.write(`${JSON.stringify(cmd)}\n`);
    return this.exited;
  }
}
