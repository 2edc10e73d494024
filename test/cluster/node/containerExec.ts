/**
 * A command run inside a running container, as a runtime's exec: in the container's mount, UTS
 * and network namespaces (nsenter into its process), with its environment, as its user, in its working
 * directory; with a terminal (a pseudo-terminal made by util-linux `script`) when asked.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { asIdentity, type Identity } from './securityContext.ts';
import { shellQuote } from './sandbox.ts';

/** The running container a command enters. */
export interface ExecTarget {
  /** Pid of the container's process (its mounts are in place). */
  readonly pid: number;
  readonly env: Readonly<Record<string, string>>;
  readonly identity: Identity;
  /** The container's workingDir ('/' when it names none). */
  readonly workingDir: string;
}

/** A terminal's size, as kubectl sends it on the resize stream. */
export interface TerminalSize {
  readonly Width: number;
  readonly Height: number;
}

/**
 * The host argv that runs `argv` in the container. The working directory is opened through
 * /proc/PID/root, so it resolves in the container's mounts (nsenter opens it before entering).
 * With `tty`, `script` gives the command a pseudo-terminal and returns its exit status.
 */
export function execArgv(t: ExecTarget, argv: readonly string[], tty = false): string[] {
  const wd = `/proc/${t.pid}/root${t.workingDir.startsWith('/') ? '' : '/'}${t.workingDir}`;
  const command = tty
    ? ['script', '--quiet', '--return', '--command', `exec ${argv.map(shellQuote).join(' ')}`, '/dev/null']
    : argv;
  return ['nsenter', '-t', String(t.pid), '-m', '-u', '-n', `--wd=${wd}`, '--', ...asIdentity(t.identity, command)];
}

/** The environment of an exec: the container's, and TERM for a terminal as runtimes set it. */
export function execEnv(t: ExecTarget, tty: boolean): Record<string, string> {
  return tty && !t.env.TERM ? { ...t.env, TERM: 'xterm' } : { ...t.env };
}

/** Starts the command in its own process group; stdin is a pipe only when asked for. */
export function startExec(
  t: ExecTarget,
  argv: readonly string[],
  opts: { stdin: boolean; tty: boolean },
): ChildProcess {
  const [cmd, ...args] = execArgv(t, argv, opts.tty);
  return spawn(cmd!, args, {
    env: execEnv(t, opts.tty),
    detached: true,
    stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
}

/** How an exec ended, as the kubelet reports it: 128 + signal number when killed by one. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  const numbers: Partial<Record<NodeJS.Signals, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGKILL: 9,
    SIGPIPE: 13,
    SIGTERM: 15,
  };
  return 128 + (signal ? (numbers[signal] ?? 0) : 0);
}

/** The terminal of a `script` process: its child's stdin, /dev/pts/N; undefined until it has one. */
function terminalOf(scriptPid: number): string | undefined {
  try {
    const children = readFileSync(`/proc/${scriptPid}/task/${scriptPid}/children`, 'utf8').trim().split(/\s+/);
    const pts = children.filter(Boolean).map((c) => readlinkSync(`/proc/${c}/fd/0`));
    return pts.find((p) => p.startsWith('/dev/pts/'));
  } catch {
    return undefined;
  }
}

/**
 * Sets the terminal's size (the kernel sends SIGWINCH to its foreground group), waiting up to
 * 2 s for `script` to have made it.
 */
export async function resizeTerminal(scriptPid: number, size: TerminalSize): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const pts = terminalOf(scriptPid);
    if (pts) {
      await new Promise<void>((resolve) => {
        execFile('stty', ['-F', pts, 'rows', String(size.Height), 'cols', String(size.Width)], () => resolve());
      });
      return;
    }
    await sleep(20);
  }
}
