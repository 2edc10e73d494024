/**
 * `kubectl etcd` arguments as data: the command, its NAME, and the flags kubectl users expect
 * (-n/--namespace, --kubeconfig, --context, -o). Pure: parse(argv) returns a Command or throws a
 * UsageError that says what to type instead.
 */
import { parseArgs } from 'node:util';

/** Wrong words on the command line: exit 2 with the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly code = 'ERR_KUBECTL_ETCD_USAGE';
}

/** How a result is printed: a table or text for people, JSON or YAML for scripts. */
export type Output = 'text' | 'json' | 'yaml';

/** Flags every command takes. */
export interface Common {
  readonly namespace: string | undefined;
  readonly kubeconfig: string | undefined;
  readonly context: string | undefined;
  /** Where the manager's Service is: for why and statechart. */
  readonly operatorNamespace: string;
  readonly operatorService: string;
  /** Longest wait, in ms. */
  readonly timeoutMs: number;
  readonly wait: boolean;
}

/** Where an on-demand snapshot goes, when given on the command line. */
export type DestinationFlags =
  | { readonly pvc: { readonly claimName: string; readonly subPath?: string } }
  | {
      readonly s3: {
        readonly bucket: string;
        readonly keyPrefix?: string;
        readonly endpoint?: string;
        readonly region?: string;
        readonly forcePathStyle: boolean;
        readonly credentialsSecretRef: { readonly name: string };
      };
    };

/** One parsed command line. */
export type Command = Common &
  (
    | { readonly command: 'help'; readonly topic?: string }
    | { readonly command: 'status'; readonly name: string; readonly output: Output }
    | {
        readonly command: 'snapshot';
        readonly name: string;
        readonly output: Output;
        /** The EtcdSnapshot's name; default CLUSTER-TIME. */
        readonly snapshotName: string | undefined;
        readonly destination: DestinationFlags | undefined;
        /** Take the destination of this EtcdSnapshot. */
        readonly like: string | undefined;
        readonly deletionPolicy: 'Delete' | 'Retain' | undefined;
      }
    | {
        readonly command: 'restore';
        /** The EtcdSnapshot to restore. */
        readonly snapshot: string;
        /** The new EtcdCluster's name. */
        readonly to: string;
        /** Copy the spec of this EtcdCluster (default: the one the snapshot was taken of, if it is there). */
        readonly like: string | undefined;
        readonly replicas: number | undefined;
        readonly version: string | undefined;
        readonly apply: boolean;
        readonly output: Output;
      }
    | { readonly command: 'defrag'; readonly name: string; readonly output: Output }
    | {
        readonly command: 'why';
        readonly name: string;
        readonly kind: string | undefined;
        readonly tail: number | undefined;
        readonly output: Output;
      }
    | {
        readonly command: 'statechart';
        readonly name: string;
        readonly member: string | undefined;
        readonly last: number | undefined;
        readonly format: 'svg' | 'dot' | 'json';
        /** A file; undefined for standard output. */
        readonly file: string | undefined;
      }
  );

/** The commands, in the order `kubectl etcd --help` lists them. */
export const COMMANDS = ['status', 'snapshot', 'restore', 'defrag', 'why', 'statechart'] as const;

const OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'operator-namespace': { type: 'string' },
  'operator-service': { type: 'string' },
  timeout: { type: 'string' },
  wait: { type: 'boolean' },
  'no-wait': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  // snapshot
  name: { type: 'string' },
  like: { type: 'string' },
  pvc: { type: 'string' },
  s3: { type: 'string' },
  's3-endpoint': { type: 'string' },
  's3-region': { type: 'string' },
  's3-credentials': { type: 'string' },
  's3-path-style': { type: 'boolean' },
  'deletion-policy': { type: 'string' },
  // restore
  to: { type: 'string' },
  replicas: { type: 'string' },
  version: { type: 'string' },
  apply: { type: 'boolean' },
  // why, statechart
  kind: { type: 'string' },
  tail: { type: 'string' },
  member: { type: 'string' },
  last: { type: 'string' },
  format: { type: 'string' },
} as const;

/** Which flags each command reads besides the common ones. */
const OWN: Readonly<Record<(typeof COMMANDS)[number], readonly string[]>> = {
  status: [],
  snapshot: [
    'name',
    'like',
    'pvc',
    's3',
    's3-endpoint',
    's3-region',
    's3-credentials',
    's3-path-style',
    'deletion-policy',
  ],
  restore: ['to', 'like', 'replicas', 'version', 'apply'],
  defrag: [],
  why: ['kind', 'tail'],
  statechart: ['member', 'last', 'format'],
};
const COMMON = [
  'namespace',
  'kubeconfig',
  'context',
  'output',
  'operator-namespace',
  'operator-service',
  'timeout',
  'wait',
  'no-wait',
  'help',
];

/** Defaults that come from the environment. */
export interface ArgsEnv {
  readonly KUBECTL_ETCD_OPERATOR_NAMESPACE?: string | undefined;
  readonly KUBECTL_ETCD_OPERATOR_SERVICE?: string | undefined;
}

/** Parses the words after `kubectl etcd`. */
export function parse(argv: readonly string[], env: ArgsEnv = {}): Command {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
  const { values: v, positionals } = parsed;
  const [command, ...names] = positionals;
  const common: Common = {
    namespace: v.namespace,
    kubeconfig: v.kubeconfig,
    context: v.context,
    operatorNamespace: v['operator-namespace'] ?? env.KUBECTL_ETCD_OPERATOR_NAMESPACE ?? 'etcd-operator-system',
    operatorService: v['operator-service'] ?? env.KUBECTL_ETCD_OPERATOR_SERVICE ?? 'etcd-operator',
    timeoutMs: v.timeout === undefined ? 10 * 60_000 : duration(v.timeout),
    wait: !(v['no-wait'] ?? false),
  };
  if (command === undefined || command === 'help' || (v.help && !isCommand(command))) {
    return { ...common, command: 'help', ...(names[0] ? { topic: names[0] } : {}) };
  }
  if (!isCommand(command)) throw new UsageError(`unknown command '${command}' (one of ${COMMANDS.join(', ')})`);
  if (v.help) return { ...common, command: 'help', topic: command };
  const given = Object.keys(v).filter((k) => !COMMON.includes(k) && !OWN[command].includes(k));
  if (given.length > 0) throw new UsageError(`${command} does not take --${given.join(', --')}`);
  const one = (what: string): string => {
    if (names.length === 1 && names[0]) return names[0];
    throw new UsageError(
      names.length === 0
        ? `${command}: ${what} is missing`
        : `${command}: one ${what} expected, got ${names.join(' ')}`,
    );
  };
  switch (command) {
    case 'status':
    case 'defrag':
      return { ...common, command, name: one('NAME'), output: output(v.output) };
    case 'snapshot':
      return {
        ...common,
        command,
        name: one('NAME'),
        output: output(v.output),
        snapshotName: v.name,
        destination: destination(v),
        like: v.like,
        deletionPolicy: deletionPolicy(v['deletion-policy']),
      };
    case 'restore': {
      const snapshot = one('SNAPSHOT');
      if (!v.to) throw new UsageError('restore: --to NAME is missing (the new EtcdCluster to restore into)');
      return {
        ...common,
        command,
        snapshot,
        to: v.to,
        like: v.like,
        replicas: v.replicas === undefined ? undefined : count('--replicas', v.replicas, 0),
        version: v.version,
        apply: v.apply ?? false,
        output: output(v.output ?? (v.apply ? undefined : 'yaml')),
      };
    }
    case 'why':
      return {
        ...common,
        command,
        name: one('NAME'),
        kind: kind(v.kind),
        tail: v.tail === undefined ? undefined : count('--tail', v.tail, 1),
        output: output(v.output),
      };
    case 'statechart': {
      const format = v.format ?? formatOf(v.output) ?? 'svg';
      if (format !== 'svg' && format !== 'dot' && format !== 'json') {
        throw new UsageError(`statechart: --format must be svg, dot or json, not ${format}`);
      }
      return {
        ...common,
        command,
        name: one('NAME'),
        member: v.member,
        last: v.last === undefined ? undefined : count('--last', v.last, 0),
        format,
        file: v.output === undefined || v.output === '-' ? undefined : v.output,
      };
    }
  }
}

const isCommand = (c: string): c is (typeof COMMANDS)[number] => (COMMANDS as readonly string[]).includes(c);

function output(o: string | undefined): Output {
  if (o === undefined) return 'text';
  if (o === 'json' || o === 'yaml') return o;
  throw new UsageError(`-o must be json or yaml, not ${o}`);
}

/** A statechart file's format from its extension. */
function formatOf(file: string | undefined): string | undefined {
  const ext = file?.match(/\.([a-z]+)$/)?.[1];
  return ext === 'gv' ? 'dot' : ext;
}

/** `90s`, `10m`, `1h`, `1h30m` or plain seconds, in ms. */
export function duration(text: string): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!m || text === '') throw new UsageError(`--timeout must be a duration such as 90s, 10m or 1h, not ${text}`);
  return ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000;
}

function count(flag: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min || text.trim() === '') {
    throw new UsageError(`${flag} must be a whole number of at least ${min}, not ${text}`);
  }
  return n;
}

function kind(k: string | undefined): string | undefined {
  if (k === undefined) return undefined;
  const known = ['EtcdCluster', 'EtcdMember', 'EtcdSnapshot', 'EtcdSnapshotSchedule'];
  const found = known.find((x) => x.toLowerCase() === k.toLowerCase());
  if (!found) throw new UsageError(`--kind must be one of ${known.join(', ')}, not ${k}`);
  return found;
}

function deletionPolicy(p: string | undefined): 'Delete' | 'Retain' | undefined {
  if (p === undefined || p === 'Delete' || p === 'Retain') return p;
  throw new UsageError(`--deletion-policy must be Delete or Retain, not ${p}`);
}

function destination(v: {
  pvc?: string;
  s3?: string;
  's3-endpoint'?: string;
  's3-region'?: string;
  's3-credentials'?: string;
  's3-path-style'?: boolean;
  like?: string;
}): DestinationFlags | undefined {
  const s3Flags = ['s3-endpoint', 's3-region', 's3-credentials', 's3-path-style'] as const;
  if (v.pvc !== undefined && v.s3 !== undefined) throw new UsageError('snapshot: give --pvc or --s3, not both');
  if ((v.pvc !== undefined || v.s3 !== undefined) && v.like !== undefined) {
    throw new UsageError('snapshot: give --like or a destination (--pvc, --s3), not both');
  }
  if (v.s3 === undefined && s3Flags.some((f) => v[f] !== undefined)) {
    throw new UsageError(
      'snapshot: --s3-endpoint, --s3-region, --s3-credentials and --s3-path-style go with --s3 s3://BUCKET/PREFIX',
    );
  }
  if (v.pvc !== undefined) {
    const [claimName = '', ...rest] = v.pvc.split('/');
    if (!claimName) throw new UsageError(`snapshot: --pvc must be CLAIM or CLAIM/DIR, not ${v.pvc}`);
    return { pvc: { claimName, ...(rest.length ? { subPath: rest.join('/') } : {}) } };
  }
  if (v.s3 === undefined) return undefined;
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(v.s3);
  if (!m?.[1]) throw new UsageError(`snapshot: --s3 must be s3://BUCKET or s3://BUCKET/PREFIX, not ${v.s3}`);
  if (!v['s3-credentials']) {
    throw new UsageError(
      'snapshot: --s3 needs --s3-credentials SECRET (a Secret in the namespace with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)',
    );
  }
  return {
    s3: {
      bucket: m[1],
      ...(m[2] ? { keyPrefix: m[2] } : {}),
      ...(v['s3-endpoint'] ? { endpoint: v['s3-endpoint'] } : {}),
      ...(v['s3-region'] ? { region: v['s3-region'] } : {}),
      forcePathStyle: v['s3-path-style'] ?? false,
      credentialsSecretRef: { name: v['s3-credentials'] },
    },
  };
}
