/** One control-plane process: spawned with its output in a log file, waited on, stopped. */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Log } from '../types.ts';
import { NotReadyError, ProcessExitedError } from './errors.ts';

/** How to start a process and where its files go. */
export interface ProcessSpec {
  readonly name: string;
  readonly bin: string;
  readonly args: readonly string[];
  /** The part's dir: the log goes to `<dir>/<name>.log`, the pid to `<dir>/<name>.pid`. */
  readonly dir: string;
  readonly log?: Log;
}

/** A running process. */
export interface Proc {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves with a description ("code 1", "signal SIGKILL") when the process has ended. */
  readonly exited: Promise<string>;
  /** The last lines of its output, for error messages. */
  lastLines(): string[];
  /** SIGTERM, then SIGKILL after graceMs; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const keptLines = 40;
/** util-linux's setpriv (Debian: essential, always there); without it children outlive a killed parent. */
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));

/** Starts a process, first killing one left running by an earlier run in the same dir. */
export async function startProcess(spec: ProcessSpec): Promise<Proc> {
  await mkdir(spec.dir, { recursive: true });
  const pidPath = path.join(spec.dir, `${spec.name}.pid`);
  await killLeftover(pidPath, [spec.bin]);
  const logPath = path.join(spec.dir, `${spec.name}.log`);
  const file = createWriteStream(logPath, { flags: 'a' });
  file.write(`\n--- ${new Date().toISOString()} ${spec.bin} ${spec.args.join(' ')}\n`);
  // Its own process group, so a Ctrl-C meant for the parent does not reach it before stop()
  // does (in order); and, through setpriv, SIGKILL when the parent dies, so no run leaves
  // a control plane behind.
  const [command, args]: [string, readonly string[]] = setpriv
    ? [setpriv, ['--pdeathsig', 'SIGKILL', '--', spec.bin, ...spec.args]]
    : [spec.bin, spec.args];
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream.on('data', (chunk: Buffer) => {
      file.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        tail.push(line);
        if (tail.length > keptLines) tail.shift();
        spec.log?.(`${spec.name}: ${line}`);
      }
    });
  }
  const exited = new Promise<string>((resolve) => {
    child.on('error', (err) => resolve(`could not start: ${err.message}`));
    child.on('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
  }).then(async (how) => {
    await new Promise((r) => file.end(r));
    await rm(pidPath, { force: true });
    return how;
  });
  if (child.pid !== undefined) await writeFile(pidPath, `${child.pid}\n`);
  return {
    name: spec.name,
    pid: child.pid ?? -1,
    logPath,
    exited,
    lastLines: () => [...tail],
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return void (await exited);
      child.kill('SIGTERM');
      const done = await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]);
      if (!done) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Polls probe until it answers true; throws when the process exits first or after timeoutMs. */
export async function waitReady(proc: Proc, probe: () => Promise<string | true>, timeoutMs: number): Promise<void> {
  const start = Date.now();
  let ended: string | undefined;
  void proc.exited.then((how) => (ended = how));
  let last = 'not checked yet';
  while (Date.now() - start < timeoutMs) {
    if (ended !== undefined) throw new ProcessExitedError(proc.name, ended, proc.lastLines());
    try {
      const answer = await probe();
      if (answer === true) return;
      last = answer;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(150);
  }
  throw new NotReadyError(proc.name, Date.now() - start, last, proc.lastLines());
}

/**
 * Kills the processes an earlier run in dir left behind (a test runner killed hard leaves its
 * children running with the dir's ports and locks). Only a pid running one of bins is killed,
 * so a recycled pid is left alone.
 */
export async function killLeftovers(dir: string, bins: readonly string[]): Promise<void> {
  if (!existsSync(dir)) return;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.pid'))) {
    await killLeftover(path.join(dir, file), bins);
  }
}

async function killLeftover(pidPath: string, bins: readonly string[]): Promise<void> {
  if (!existsSync(pidPath)) return;
  const pid = Number(readFileSync(pidPath, 'utf8').trim());
  const cmdline = `/proc/${pid}/cmdline`;
  if (!Number.isInteger(pid) || pid <= 1 || !existsSync(cmdline)) return;
  // Right after a start the pid may still be setpriv, about to exec the binary.
  const argv = readFileSync(cmdline, 'utf8').split('\0');
  const program = path.basename(argv[0] ?? '') === 'setpriv' ? argv.find((a) => bins.includes(a)) : argv[0];
  if (!bins.includes(program ?? '')) return;
  process.kill(pid, 'SIGKILL');
  while (alive(pid)) await sleep(50);
}

function alive(pid: number): boolean {
  try {
    // A killed process whose parent has not reaped it yet is a zombie ('Z'): gone for our purpose.
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}
