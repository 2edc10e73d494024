/**
 * One run of a container: a process in its own mount and UTS namespaces (and its Pod's network
 * namespace), output to a file.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import type { V1ContainerStateTerminated } from '@kubernetes/client-node';
import { sandboxScript, type SandboxSpec } from './sandbox.ts';

/** How a container run ended. */
export interface ExitStatus {
  /** Exit code as a kubelet reports it: 128 + signal number when killed by a signal. */
  readonly exitCode: number;
  readonly signal?: NodeJS.Signals;
  readonly startedAt: Date;
  readonly finishedAt: Date;
}

/** What one run of a container needs. */
export interface RunSpec extends SandboxSpec {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** File the run's stdout and stderr go to (appended). */
  readonly logFile: string;
  /** Keep a pipe to the command's stdin (the container's `stdin: true`); /dev/null otherwise. */
  readonly stdin?: boolean;
}

/** A running container process. */
export interface ContainerProcess {
  readonly pid: number;
  readonly startedAt: Date;
  /** Resolves once the process has exited. */
  readonly exited: Promise<ExitStatus>;
  /** Resolves once the mounts are made and the command runs (false: it exited before). */
  readonly sandboxed: Promise<boolean>;
  /** The command's stdin, when the run keeps it open (for attach). */
  readonly stdin?: Writable;
  /** Sends a signal to the container's whole process group; no-op once exited. */
  signal(sig: NodeJS.Signals): void;
}

const signalNumbers: Partial<Record<NodeJS.Signals, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGABRT: 6,
  SIGKILL: 9,
  SIGSEGV: 11,
  SIGPIPE: 13,
  SIGTERM: 15,
};

/**
 * Starts a container run. setpriv makes the kernel SIGKILL the container if this Node process
 * dies, so a crashed test leaves no orphan etcd behind; detached gives it its own process group.
 */
export function startContainerProcess(spec: RunSpec): ContainerProcess {
  mkdirSync(spec.scratch, { recursive: true });
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const script = sandboxScript(spec);
  const out = openSync(spec.logFile, 'a');
  const child = spawn(
    'setpriv',
    [
      '--pdeathsig',
      'KILL',
      '--',
      ...(spec.netns ? ['nsenter', `--net=${spec.netns}`, '--'] : []),
      'unshare',
      '--mount',
      '--uts',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      script,
      'sh',
      ...spec.argv,
    ],
    { env: { ...spec.env }, detached: true, stdio: [spec.stdin ? 'pipe' : 'ignore', out, out] },
  );
  child.stdin?.on('error', () => undefined); // a command that exits without reading it
  closeSync(out);
  const startedAt = new Date();
  let done = false;
  const exited = new Promise<ExitStatus>((resolve) => {
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (done) return;
      done = true;
      const exitCode = code ?? 128 + (signal ? (signalNumbers[signal] ?? 0) : 0);
      resolve({ exitCode, ...(signal ? { signal } : {}), startedAt, finishedAt: new Date() });
    };
    child.once('exit', finish);
    child.once('error', (err) => {
      const fd = openSync(spec.logFile, 'a');
      writeSync(fd, `local node: cannot start container: ${err.message}\n`);
      closeSync(fd);
      finish(127, null);
    });
  });
  return {
    pid: child.pid ?? -1,
    startedAt,
    ...(child.stdin ? { stdin: child.stdin } : {}),
    exited,
    sandboxed: child.pid ? whenSandboxed(child.pid, exited) : Promise.resolve(false),
    signal(sig) {
      if (done || !child.pid) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // Already gone between the exit and our bookkeeping: nothing to signal.
      }
    },
  };
}

/**
 * The end of a run's log as terminationMessagePolicy FallbackToLogsOnError reports it: the last
 * 80 lines or 2048 bytes, whichever is less (the kubelet's limits); '' when there is no log.
 */
export function logTail(logFile: string, maxLines = 80, maxBytes = 2048): string {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return '';
  }
  const bytes = Buffer.from(text);
  const tail = bytes.length > maxBytes ? bytes.subarray(bytes.length - maxBytes).toString('utf8') : text;
  const lines = tail.split('\n');
  return lines.slice(-(maxLines + (tail.endsWith('\n') ? 1 : 0))).join('\n');
}

/** How the Pod status tells of a finished run. */
export function terminatedState(exit: ExitStatus, containerID?: string): V1ContainerStateTerminated {
  return {
    exitCode: exit.exitCode,
    reason: exit.exitCode === 0 ? 'Completed' : 'Error',
    startedAt: exit.startedAt,
    finishedAt: exit.finishedAt,
    ...(exit.signal ? { signal: exit.exitCode - 128 } : {}),
    ...(containerID ? { containerID } : {}),
  };
}

/**
 * Polls until the process is past setpriv, unshare and the sandbox script (whose last step is
 * exec of the command): before that, nsenter would enter a namespace without the mounts.
 */
async function whenSandboxed(pid: number, exited: Promise<ExitStatus>): Promise<boolean> {
  let done = false;
  void exited.then(() => (done = true));
  while (!done) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return false;
    }
    const setup =
      argv[0] === 'setpriv' ||
      argv[0] === 'nsenter' ||
      argv[0] === 'unshare' ||
      (argv[0] === '/bin/sh' && argv[2]?.startsWith('set -e\n'));
    if (argv[0] && !setup) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}
