/**
 * The manager as the tests, `make dev`, the crash sweep and the benchmarks run it: a child
 * process of `etcd-operator manager` against a kubeconfig, reaching etcd by Pod IP (the host
 * has no cluster DNS), its JSON log lines kept and handed to whoever listens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** A log line of the manager (pino JSON), parsed. */
export interface ManagerLine {
  readonly msg: string;
  readonly level: number;
  readonly [field: string]: unknown;
}

/** Options of startManager. */
export interface ManagerProcessOptions {
  readonly kubeconfig: string;
  /** Directory of the journal (journal.db); the same dir resumes the same journal. */
  readonly dir: string;
  /** Extra environment, e.g. ETCD_OPERATOR_FAILPOINT. */
  readonly env?: Readonly<Record<string, string>>;
  /** Extra flags. */
  readonly args?: readonly string[];
  /** Every log line, as it comes. */
  readonly onLine?: (line: ManagerLine) => void;
}

/** A running manager. */
export interface ManagerProcess {
  readonly child: ChildProcess;
  /** Every line so far. */
  readonly lines: ManagerLine[];
  /** Port of /metrics, /healthz and /readyz. */
  readonly port: number;
  /** Resolves with the exit code (or the signal's name) once the process ended. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | string>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<number | string>;
}

/** Start times of the managers this process runs that have not exited, by the namespace they watch ('' for all). */
const running = new Map<string, number[]>();

/**
 * Since when a manager this process started keeps `namespace`'s statuses (the earliest of those
 * alive); 0 when it never started one for it (a manager installed in the cluster runs); null
 * when every one it started has exited: nothing keeps the statuses true meanwhile.
 */
export function managerSince(namespace: string): number | null {
  const alive = [...(running.get(namespace) ?? []), ...(running.get('') ?? [])];
  if (alive.length > 0) return Math.min(...alive);
  return running.has(namespace) || running.has('') ? null : 0;
}

/** Notes a manager's start until it exits. */
function track(args: readonly string[], exited: Promise<unknown>): void {
  const at = args.indexOf('--namespace');
  const namespace = at >= 0 ? (args[at + 1] ?? '') : '';
  const started = Date.now();
  running.set(namespace, [...(running.get(namespace) ?? []), started]);
  void exited.then(() => {
    const left = running.get(namespace) ?? [];
    left.splice(left.indexOf(started), 1);
  });
}

const cli = path.join(import.meta.dirname, '..', 'manager', 'cli.ts');

/**
 * The managers this process started that have not exited. None outlives it: a run ended by a
 * signal (the crash sweep's Ctrl-C, its process.exit) would otherwise leave managers acting on a
 * cluster nobody watches, or retrying one that is gone.
 */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/** Starts `etcd-operator manager`; resolves once it serves its endpoints. */
export function startManager(o: ManagerProcessOptions): Promise<ManagerProcess> {
  mkdirSync(o.dir, { recursive: true });
  const args = [
    cli,
    'manager',
    '--kubeconfig',
    o.kubeconfig,
    '--journal',
    path.join(o.dir, 'journal.db'),
    '--listen',
    '127.0.0.1:0',
    '--leader-elect=false',
    '--etcd-address',
    'pod-ip',
    ...(o.args ?? []),
  ];
  const child = spawn(process.execPath, args, { env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: ManagerLine[] = [];
  let stderr = '';
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  track(o.args ?? [], exited);
  children.add(child);
  void exited.then(() => children.delete(child));
  return new Promise((resolve, reject) => {
    let buffered = '';
    let port = 0;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop() ?? '';
      for (const text of parts) {
        let line: ManagerLine;
        try {
          line = JSON.parse(text) as ManagerLine;
        } catch {
          continue;
        }
        lines.push(line);
        o.onLine?.(line);
        if (!port && typeof line.port === 'number') {
          port = line.port;
          resolve({
            child,
            lines,
            port,
            exited,
            stop: () => (child.kill('SIGTERM'), exited),
            kill: () => (child.kill('SIGKILL'), exited),
          });
        }
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    void exited.then((code) =>
      reject(new Error(`the manager exited (${code}) before serving: ${stderr.trim().slice(-2000)}`)),
    );
  });
}
