/**
 * `etcd-operator statechart`: a machine's chart (`cluster`, `member`), or an object's chart
 * with its current state and the path it took overlaid from the journal (`NAME --db PATH`).
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Journal, type CommandIO } from '../journal/index.ts';
import { overlayInputFrom } from './from-journal.ts';
import { isMachineName, machineChart, MACHINE_NAMES } from './machines.ts';
import { MACHINE_FORM } from './names.ts';
import { isFormat, renderChart, FORMATS } from './output.ts';
import { overlayOf } from './overlay.ts';

/** The usage text. */
export const STATECHART_USAGE = `usage: etcd-operator ${MACHINE_FORM} [--format svg|dot|json] [-o FILE]
       etcd-operator statechart NAME [-n NAMESPACE] [--member M] [--last N] [--format F] [-o FILE] --db PATH

The first form draws a machine from its definition: every state with the step and message
\`kubectl describe\` shows, nested states grouped, transitions labelled event [guard] / intents.
The second draws the machine of the EtcdCluster NAME (or of its member M) with its current
state highlighted and the path it took, read from the manager's journal.

  -n, --namespace NS   namespace of NAME (default: default)
      --member M       the cluster's EtcdMember M (its name, or its ordinal: NAME-M)
      --last N         number the last N steps that moved, oldest first (default 10)
      --format F       svg (default), dot (Graphviz input) or json (the chart as data)
  -o, --output FILE    write to FILE instead of standard output
      --db PATH        the journal file (default: $ETCD_OPERATOR_JOURNAL)
      --from-cluster   read the journal through the cluster (not available yet)
`;

/** Runs the command with `argv` = the words after `statechart`; resolves to 0, 1 (error) or 2 (usage). */
export async function runStatechartCommand(
  argv: readonly string[],
  io: CommandIO,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const fail = (code: number, message: string): number => {
    io.stderr(`etcd-operator statechart: ${message}\n${code === 2 ? STATECHART_USAGE : ''}`);
    return code;
  };
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (err) {
    return fail(2, (err as Error).message);
  }
  if (args.help) {
    io.stdout(STATECHART_USAGE);
    return 0;
  }
  if (!isFormat(args.format)) return fail(2, `--format must be one of ${FORMATS.join(', ')}, not ${args.format}`);
  const format = args.format;
  if (args.fromCluster) {
    return fail(
      1,
      "--from-cluster is not available yet: run the command in the manager's Pod (kubectl exec deploy/RELEASE -- etcd-operator statechart NAME -n NAMESPACE > chart.svg), or copy the journal file and give --db PATH",
    );
  }
  const db = args.db ?? env.ETCD_OPERATOR_JOURNAL;
  let text: string;
  try {
    if (db === undefined && args.member === undefined) {
      if (!isMachineName(args.name)) {
        return fail(
          2,
          `unknown machine '${args.name}' (one of ${MACHINE_NAMES.join(', ')}); to chart an EtcdCluster named so, give --db PATH`,
        );
      }
      text = await renderChart(machineChart(args.name), format);
    } else {
      if (db === undefined) return fail(2, `charting ${args.name} needs the journal: give --db PATH`);
      const journal = Journal.open(resolve(db), { readonly: true });
      try {
        const { machine, input } = overlayInputFrom(journal, args);
        const chart = machineChart(machine);
        text = await renderChart(chart, format, overlayOf(chart, input));
      } finally {
        journal.close();
      }
    }
  } catch (err) {
    return fail(1, (err as Error).message);
  }
  if (args.output === undefined) io.stdout(text);
  else writeFileSync(args.output, text);
  return 0;
}

function parse(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      namespace: { type: 'string', short: 'n' },
      member: { type: 'string' },
      last: { type: 'string' },
      format: { type: 'string' },
      output: { type: 'string', short: 'o' },
      db: { type: 'string' },
      'from-cluster': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const last = values.last === undefined ? undefined : Number(values.last);
  if (last !== undefined && !(Number.isSafeInteger(last) && last >= 0)) {
    throw new Error(`--last must be a number of steps, not ${values.last}`);
  }
  if (!values.help && positionals.length !== 1) {
    throw new Error(
      positionals.length === 0
        ? 'cluster, member, snapshot or NAME is missing'
        : `one NAME expected, got ${positionals.join(' ')}`,
    );
  }
  return {
    name: positionals[0] ?? '',
    namespace: values.namespace ?? 'default',
    ...(values.member === undefined ? {} : { member: values.member }),
    ...(last === undefined ? {} : { last }),
    format: values.format ?? 'svg',
    output: values.output,
    db: values.db,
    fromCluster: values['from-cluster'] ?? false,
    help: values.help ?? false,
  };
}
