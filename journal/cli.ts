/**
 * `etcd-operator journal NAME`: prints an object's timeline from the journal file, read-only,
 * while the manager keeps writing it. For a cluster it also prints its members' rows.
 */
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { isDamage, isJournalError } from './errors.ts';
import { Journal } from './journal.ts';
import { TimelineFormatter } from './timeline.ts';
import type { ObjectKind, Snapshot } from './types.ts';

/** What a user reading a damaged journal should know. */
const DAMAGED_HINT =
  '; a manager that opens it moves it aside (NAME.damaged-TIME) and starts a new journal, adopting its clusters';

/** Where the command writes. */
export interface CommandIO {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

/** Knobs for embedding and tests. */
export interface JournalCommandOptions {
  /** Ends --follow. */
  readonly signal?: AbortSignal;
  /** Environment to read ETCD_OPERATOR_JOURNAL from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How often --follow looks for new rows; default 200 ms. */
  readonly pollMs?: number;
}

/** The usage text. */
export const JOURNAL_USAGE = `usage: etcd-operator journal NAME [-n NAMESPACE] [--kind EtcdCluster|EtcdMember|EtcdSnapshot|EtcdSnapshotSchedule] [--tail STEPS] [--follow] [--json] [--db PATH]

Prints the timeline of an EtcdCluster (with its members and snapshots), an EtcdMember or an EtcdSnapshot: each step's
event and transition, the intents it asked for and how they ended.

  -n, --namespace NS   namespace of NAME (default: default)
      --kind KIND      EtcdCluster, EtcdMember, EtcdSnapshot or EtcdSnapshotSchedule, when more than one has the name
      --tail STEPS     only the last STEPS steps of each object (then new ones, with --follow)
  -f, --follow         keep printing new rows until interrupted
      --json           one JSON object per row
      --db PATH        journal file (default: $ETCD_OPERATOR_JOURNAL or ./etcd-operator-journal.db)
`;

class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'ERR_JOURNAL_USAGE';
}

/** Runs the command with `argv` = the words after `journal`; resolves to the exit code (0, 1 error, 2 usage). */
export async function runJournalCommand(
  argv: readonly string[],
  io: CommandIO,
  opts: JournalCommandOptions = {},
): Promise<number> {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (err) {
    io.stderr(`etcd-operator journal: ${(err as Error).message}\n${JOURNAL_USAGE}`);
    return 2;
  }
  if (args.help) {
    io.stdout(JOURNAL_USAGE);
    return 0;
  }
  const env = opts.env ?? process.env;
  const path = resolve(args.db ?? env.ETCD_OPERATOR_JOURNAL ?? 'etcd-operator-journal.db');
  let journal: Journal;
  try {
    journal = Journal.open(path, { readonly: true });
  } catch (err) {
    const hint = isJournalError(err, 'ERR_JOURNAL_NOT_FOUND')
      ? ' (give --db PATH or set ETCD_OPERATOR_JOURNAL)'
      : isJournalError(err, 'ERR_JOURNAL_DAMAGED')
        ? DAMAGED_HINT
        : '';
    io.stderr(`etcd-operator journal: ${(err as Error).message}${hint}\n`);
    return 1;
  }
  try {
    return await show(journal, args, io, opts);
  } catch (err) {
    if (!isDamage(err)) throw err;
    io.stderr(`etcd-operator journal: journal ${path} is damaged: ${(err as Error).message}${DAMAGED_HINT}\n`);
    return 1;
  } finally {
    journal.close();
  }
}

async function show(
  journal: Journal,
  args: ReturnType<typeof parse>,
  io: CommandIO,
  opts: JournalCommandOptions,
): Promise<number> {
  const { name, namespace, kind } = args;
  const found = select(journal.objects(), namespace, name, kind);
  if (found.length === 0) {
    const known = journal.objects().map((o) => `${o.ref.kind}/${o.ref.name}`);
    io.stderr(
      `etcd-operator journal: no ${kind ?? 'EtcdCluster, EtcdMember or EtcdSnapshot'} named ${name} in namespace ${namespace} ` +
        `in ${journal.path}` +
        (known.length ? ` (it has: ${known.slice(0, 20).join(', ')})` : ' (it is empty)') +
        '\n',
    );
    return 1;
  }
  const formatter = new TimelineFormatter({
    json: args.json,
    showObject: found.length > 1 || found[0]?.ref.kind === 'EtcdCluster',
  });
  if (!args.json)
    for (const o of found)
      io.stdout(
        `# ${o.ref.kind} ${o.ref.namespace}/${o.ref.name} (uid ${o.ref.uid}): ${o.stage} after step #${o.seq}\n`,
      );
  // With --tail, rows older than the file's end when we start are skipped by the cursor too.
  let last = args.tail === undefined ? 0 : journal.lastLsn();
  let uids = found.map((o) => o.ref.uid);
  for (let first = true; ; first = false) {
    const rows =
      first && args.tail !== undefined
        ? tail(journal, found, args.tail)
        : journal.timeline({ uids }, { afterLsn: last });
    for (const line of formatter.format(rows)) io.stdout(`${line}\n`);
    last = Math.max(last, rows.at(-1)?.lsn ?? 0);
    if (!args.follow) return 0;
    try {
      await sleep(opts.pollMs ?? 200, undefined, { signal: opts.signal });
    } catch {
      return 0; // aborted: --follow ends quietly
    }
    // A cluster grows members while we follow: pick new ones up.
    const now = select(journal.objects(), namespace, name, kind).map((o) => o.ref.uid);
    const added = now.filter((u) => !uids.includes(u));
    if (added.length > 0) {
      // Rows of a new member written before `last` would be skipped by the lsn cursor: print them first.
      const early = journal.timeline({ uids: added }).filter((r) => r.lsn <= last);
      for (const line of formatter.format(early)) io.stdout(`${line}\n`);
      uids = now;
    }
  }
}

/** The last `steps` steps of each object, merged in write order. */
function tail(journal: Journal, objects: readonly Snapshot[], steps: number) {
  const rows = objects.flatMap((o) => journal.timeline({ uid: o.ref.uid }, { afterSeq: Math.max(0, o.seq - steps) }));
  return rows.sort((a, b) => a.lsn - b.lsn);
}

/**
 * The objects `journal NAME` covers: the cluster NAME with its members and snapshots, or the
 * member or snapshot NAME (`--kind` tells them apart when names collide).
 */
export function select(objects: readonly Snapshot[], namespace: string, name: string, kind?: ObjectKind): Snapshot[] {
  const inNs = objects.filter((o) => o.ref.namespace === namespace);
  const clusters =
    kind === undefined || kind === 'EtcdCluster'
      ? inNs.filter((o) => o.ref.kind === 'EtcdCluster' && o.ref.name === name)
      : [];
  if (clusters.length > 0) {
    const parts = inNs.filter(
      (o) =>
        (o.ref.kind === 'EtcdMember' &&
          (o.ref.cluster !== undefined ? o.ref.cluster === name : o.ref.name.startsWith(`${name}-`))) ||
        ((o.ref.kind === 'EtcdSnapshot' || o.ref.kind === 'EtcdSnapshotSchedule') && o.ref.cluster === name),
    );
    return [...clusters, ...parts];
  }
  if (kind === 'EtcdCluster') return [];
  return inNs.filter(
    (o) => o.ref.kind !== 'EtcdCluster' && (kind === undefined || o.ref.kind === kind) && o.ref.name === name,
  );
}

function parse(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      kind: { type: 'string' },
      follow: { type: 'boolean', short: 'f' },
      json: { type: 'boolean' },
      db: { type: 'string' },
      tail: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const kind = values.kind;
  if (
    kind !== undefined &&
    kind !== 'EtcdCluster' &&
    kind !== 'EtcdMember' &&
    kind !== 'EtcdSnapshot' &&
    kind !== 'EtcdSnapshotSchedule'
  ) {
    throw new UsageError(`--kind must be EtcdCluster, EtcdMember, EtcdSnapshot or EtcdSnapshotSchedule, not ${kind}`);
  }
  const objectKind: ObjectKind | undefined = kind;
  const tailSteps = values.tail === undefined ? undefined : Number(values.tail);
  if (tailSteps !== undefined && !(Number.isSafeInteger(tailSteps) && tailSteps > 0)) {
    throw new UsageError(`--tail must be a positive number of steps, not ${values.tail}`);
  }
  if (!values.help && positionals.length !== 1) {
    throw new UsageError(
      positionals.length === 0 ? 'NAME is missing' : `one NAME expected, got ${positionals.join(' ')}`,
    );
  }
  return {
    name: positionals[0] ?? '',
    namespace: values.namespace ?? 'default',
    kind: objectKind,
    follow: values.follow ?? false,
    json: values.json ?? false,
    db: values.db,
    tail: tailSteps,
    help: values.help ?? false,
  };
}
