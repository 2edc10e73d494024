/**
 * `etcd-operator agent`: commands Pods run from the operator image. `check-data` is the init
 * container that stops a member from starting etcd on a wiped volume: etcd would take an empty
 * data dir for a new member, and a seed would even bootstrap a second cluster. `snapshot` is what
 * a snapshot Job runs, and `delete-snapshot` what deletes a stored one (agent-snapshot.ts).
 */
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  readdirSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CommandIO } from '../journal/index.ts';

/** Exit code of `check-data --expect-data` when the data dir holds no etcd data. */
export const DATA_LOST_EXIT_CODE = 3;
/**
 * Exit code of `fetch-snapshot` when the stored snapshot is missing or not what was stored: no
 * retry fixes that (manager/pod-trouble.ts reads it as SnapshotUnreadable).
 */
export const SNAPSHOT_UNREADABLE_EXIT_CODE = 4;
/**
 * The guard check-data writes at a member's first start, holding its EtcdMember's uid. etcd
 * started on an emptied volume writes a WAL and a db again (under the same member ID, which it
 * learns from its peers), but never this file: data without it is not the member's own.
 */
export const DATA_GUARD_FILE = 'member/etcd-operator-guard';
/** Where Kubernetes reads a container's termination message (terminationMessagePath's default). */
export const TERMINATION_LOG = '/dev/termination-log';

/** The usage text. */
export const AGENT_USAGE = `usage: etcd-operator agent check-data|snapshot|delete-snapshot|fetch-snapshot|finish-restore|verify-snapshot ARGS

Commands Pods run from the operator image.

  check-data    --data-dir DIR [--expect-data] [--guard ID]
                says whether DIR holds etcd data (member/wal/*.wal and member/snap/db).
                With --expect-data (etcd ran on this volume before), no data means it
                was lost: the message goes to ${TERMINATION_LOG} and stderr, exit ${DATA_LOST_EXIT_CODE}.
                --guard ID: without --expect-data, writes ID to DIR/${DATA_GUARD_FILE};
                with it, data without that file holding ID is lost too.
  snapshot      --endpoint URL [--cacert FILE --cert FILE --key FILE] (--s3-bucket B
                --s3-key K [--s3-endpoint URL] [--s3-region R] [--s3-force-path-style] |
                --file PATH) [--timeout SECONDS] [--sweep-older-than SECONDS]
                streams the snapshot of the etcd member at URL (https: checked against the CA
                in --cacert, called with the client certificate --cert/--key) to S3 (credentials from
                AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) or to PATH, reads it back, and
                prints {"location","size","sha256","revision","etcdVersion"} as one JSON line.
                S3: uploads to K an earlier run began and never completed are aborted, and
                with --sweep-older-than, those to a snapshot's name beside K begun longer
                ago ("abortedUploads" counts them).
  delete-snapshot  (--s3-bucket B --s3-key K [--s3-endpoint URL] [--s3-region R]
                [--s3-force-path-style] [--sweep-older-than SECONDS] | --file PATH)
                deletes a stored snapshot, the uploads to its key that never completed (and
                stale ones beside it, as snapshot does), or PATH and PATH.partial; what is
                not there counts as deleted.
  fetch-snapshot   (--s3-bucket B --s3-key K ... | --file PATH) [--sha256 HEX] [--to FILE]
                [--clear DIR] [--etcd-version V]
                reads a stored snapshot whole, checks etcd's hash at its end and HEX, and
                writes it to FILE (whole or absent); DIR is removed first. With V, also
                refuses a snapshot whose storage version etcd V cannot run (a newer minor's).
  finish-restore   --restored DIR --data-dir DIR [--clean DIR]
                moves the data dir etcdutl restored into place unless etcd data is there.
  verify-snapshot  --endpoint http://127.0.0.1:PORT --revision R --hash-kv H
                --compact-revision C --keys N [--timeout SECONDS]
                checks the throwaway etcd restored from a snapshot beside it against what
                was recorded when the snapshot was taken: HashKV and keys at R, head >= R.
                Reports {verified, checked, differences}; a difference is not an error.
`;

/** The commands of agent-snapshot.ts, agent-restore.ts and agent-verify.ts. */
const SNAPSHOT_COMMANDS = [
  'snapshot',
  'delete-snapshot',
  'fetch-snapshot',
  'finish-restore',
  'verify-snapshot',
] as const;

/** Knobs for tests. */
export interface AgentOptions {
  /** Termination message file; written only when it already exists. Default TERMINATION_LOG. */
  readonly terminationLog?: string;
  /** Where `snapshot` reads its S3 credentials. Default process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

/** What of etcd's data a data dir holds: its WAL files and whether the backend db is there. */
export interface EtcdData {
  readonly walFiles: number;
  readonly db: boolean;
}

/** Reads a data dir; a missing dir or subdir counts as empty, other errors (EACCES) are thrown. */
export function findEtcdData(dataDir: string): EtcdData {
  const missingIsEmpty = <T>(read: () => T, empty: T): T => {
    try {
      return read();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
        return empty;
      throw err;
    }
  };
  const wal = missingIsEmpty(() => readdirSync(join(dataDir, 'member', 'wal')), []);
  const db = missingIsEmpty(() => statSync(join(dataDir, 'member', 'snap', 'db')).isFile(), false);
  return { walFiles: wal.filter((f) => f.endsWith('.wal')).length, db };
}

/** Writes the message where Kubernetes looks for it, if that file exists (never creating one). */
function writeTerminationMessage(path: string, message: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch {
    return; // not in a Pod, or a read-only path: stderr still has it
  }
  try {
    ftruncateSync(fd);
    writeSync(fd, message);
  } finally {
    closeSync(fd);
  }
}

/** The guard's content in `dataDir`, or null when it is not there. */
export function readGuard(dataDir: string): string | null {
  try {
    return readFileSync(join(dataDir, DATA_GUARD_FILE), 'utf8').trim();
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return null;
    throw err;
  }
}

/** Writes the guard whole (a temporary file renamed over it, both synced), creating member/ as etcd would (0700). */
export function writeGuard(dataDir: string, id: string): void {
  const file = join(dataDir, DATA_GUARD_FILE);
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  const fd = openSync(`${file}.tmp`, 'w', 0o600);
  try {
    writeSync(fd, `${id}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(`${file}.tmp`, file);
  const dir = openSync(join(file, '..'), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

function parseCheckData(argv: readonly string[]): { dir: string; expectData: boolean; guard?: string } {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      'data-dir': { type: 'string' },
      'expect-data': { type: 'boolean', default: false },
      guard: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (!values['data-dir']) throw new TypeError('check-data needs --data-dir DIR');
  return {
    dir: values['data-dir'],
    expectData: values['expect-data'],
    ...(values.guard ? { guard: values.guard } : {}),
  };
}

function checkData(
  { dir, expectData, guard }: ReturnType<typeof parseCheckData>,
  io: CommandIO,
  opts: AgentOptions,
): number {
  let found: EtcdData;
  let guarded: string | null = null;
  try {
    found = findEtcdData(dir);
    if (guard !== undefined && expectData) guarded = readGuard(dir);
    else if (guard !== undefined) writeGuard(dir, guard);
  } catch (err) {
    io.stderr(`etcd-operator agent check-data: cannot read ${dir}: ${(err as Error).message}\n`);
    return 1;
  }
  const whole = found.walFiles > 0 && found.db;
  const what = `${found.walFiles} WAL file(s), ${found.db ? 'a' : 'no'} member/snap/db`;
  // Data etcd wrote anew on an emptied volume: the guard the member's first start wrote is gone.
  const foreign = whole && guard !== undefined && expectData && guarded !== guard;
  if (expectData && (!whole || foreign)) {
    const held = foreign
      ? `${what} but ${guarded === null ? 'not' : 'another'} ${DATA_GUARD_FILE} (this member's first start wrote ${guard}): etcd started anew on an emptied volume`
      : what;
    const message =
      `etcd data lost: ${dir} holds ${held}, though etcd ran on this member's volume before; ` +
      'the member is not started empty, the operator replaces it with a new member while quorum holds';
    writeTerminationMessage(opts.terminationLog ?? TERMINATION_LOG, message);
    io.stderr(`${message}\n`);
    return DATA_LOST_EXIT_CODE;
  }
  io.stdout(
    whole
      ? `check-data: ${dir} holds etcd data (${what}${guard !== undefined && expectData ? ', its guard' : ''})\n`
      : `check-data: ${dir} holds no etcd data yet (${what}): etcd starts a new member there\n`,
  );
  return 0;
}

/**
 * Runs a command of agent-snapshot.ts: its report as one JSON line on stdout and as the
 * termination message (where the operator reads it); `<command> failed: ...` there and exit 1 on
 * failure (or the error's own exitCode); exit 2 on bad arguments.
 */
async function reported<A>(
  command: string,
  parse: (argv: readonly string[]) => A,
  run: (args: A, env: NodeJS.ProcessEnv) => Promise<object>,
  argv: readonly string[],
  io: CommandIO,
  opts: AgentOptions,
): Promise<number> {
  let args: A;
  try {
    args = parse(argv);
  } catch (err) {
    io.stderr(`etcd-operator agent ${command}: ${(err as Error).message}\n${AGENT_USAGE}`);
    return 2;
  }
  const log = opts.terminationLog ?? TERMINATION_LOG;
  try {
    const report = JSON.stringify(await run(args, opts.env ?? process.env));
    writeTerminationMessage(log, report);
    io.stdout(`${report}\n`);
    return 0;
  } catch (err) {
    const message = `${command} failed: ${(err as Error).message}`;
    writeTerminationMessage(log, message);
    io.stderr(`${message}\n`);
    return (err as { exitCode?: number }).exitCode ?? 1;
  }
}

/** Runs `agent SUBCOMMAND ARGS`; returns the exit code (0 ok, 1 error, 2 usage, 3 data lost). */
export async function runAgentCommand(
  argv: readonly string[],
  io: CommandIO,
  opts: AgentOptions = {},
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    io.stdout(AGENT_USAGE);
    return 0;
  }
  const command = SNAPSHOT_COMMANDS.find((c) => c === sub);
  if (command) {
    // Loaded here only: etcd3 and the S3 SDK would slow every member Pod's check-data start.
    if (command === 'verify-snapshot') {
      const v = await import('./agent-verify.ts');
      const check = (args: ReturnType<typeof v.parseVerifyArgs>) =>
        v.checkRestored(args.endpoint, args.record, args.timeoutMs);
      return reported(command, v.parseVerifyArgs, check, rest, io, opts);
    }
    if (command === 'fetch-snapshot' || command === 'finish-restore') {
      const r = await import('./agent-restore.ts');
      if (command === 'fetch-snapshot') return reported(command, r.parseFetchArgs, r.fetchSnapshot, rest, io, opts);
      return reported(command, r.parseFinishArgs, (args) => Promise.resolve(r.finishRestore(args)), rest, io, opts);
    }
    const a = await import('./agent-snapshot.ts');
    if (command === 'snapshot') return reported(command, a.parseSnapshotArgs, a.takeSnapshot, rest, io, opts);
    return reported(command, a.parseDeleteArgs, a.deleteSnapshot, rest, io, opts);
  }
  if (sub !== 'check-data') {
    io.stderr(`etcd-operator agent: ${sub === undefined ? 'no command' : `unknown command '${sub}'`}\n${AGENT_USAGE}`);
    return 2;
  }
  let args: ReturnType<typeof parseCheckData>;
  try {
    args = parseCheckData(rest);
  } catch (err) {
    io.stderr(`etcd-operator agent check-data: ${(err as Error).message}\n${AGENT_USAGE}`);
    return 2;
  }
  return checkData(args, io, opts);
}
