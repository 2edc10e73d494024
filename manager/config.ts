/** The manager's command line: `etcd-operator manager [flags]`, parsed and checked. */
import type { V1ResourceRequirements } from '@kubernetes/client-node';
import type { PodSettings } from '../effects/kubernetes/pod-settings.ts';
import { DEFAULT_ETCD_IMAGE_REPOSITORY } from '../effects/kubernetes/pod-settings.ts';
import type { EtcdAddressMode } from './resolver.ts';

/** Everything the manager is started with. */
export interface ManagerConfig {
  /** A kubeconfig file; in-cluster config when undefined. */
  readonly kubeconfig?: string;
  /** Watch one namespace; all when undefined. */
  readonly namespace?: string;
  readonly journal: string;
  readonly listenHost: string;
  readonly listenPort: number;
  /** Where the read-only debug page listens; undefined (the default) serves none. */
  readonly debugListen?: { readonly host: string; readonly port: number };
  readonly leaderElect: boolean;
  readonly leaseName: string;
  readonly leaseNamespace: string;
  readonly etcdAddress: EtcdAddressMode;
  readonly agentImage?: string;
  /** The etcd image repository, pull Secrets and default resources of the Pods it makes. */
  readonly pods: PodSettings;
  readonly logLevel: string;
  /** The longest wait between two etcd probes of a steady cluster that stays the same, ms. */
  readonly maxProbeIntervalMs: number;
  /** How long a usable read of a cluster's Secrets (operator certificate, CAs) stands, ms. */
  readonly secretReadIntervalMs: number;
  /** This manager's name: its Pod's, else host and pid. */
  readonly identity: string;
}

/** Usage of `etcd-operator manager`. */
export const MANAGER_USAGE = `usage: etcd-operator manager [flags]

  --kubeconfig PATH        kubeconfig to use (default: in-cluster config)
  --namespace NS           watch one namespace (default: all)
  --journal PATH           the write-ahead journal (default /var/lib/etcd-operator/journal.db)
  --listen HOST:PORT       /metrics, /healthz, /readyz (default :8080; port 0 picks one)
  --debug-listen HOST:PORT the read-only debug page: objects, live state charts, timelines
                           (default: not served; e.g. 127.0.0.1:8081, reached with kubectl port-forward)
  --leader-elect BOOL      hold a Lease so one manager acts at a time (default true)
  --lease-name NAME        the Lease (default etcd-operator)
  --lease-namespace NS     its namespace (default $POD_NAMESPACE, else default)
  --etcd-address MODE      reach etcd members by dns names or pod-ip (default dns)
  --agent-image IMAGE      image of the check-data init container in etcd Pods
  --etcd-image-repository REPO
                           where etcd's images come from, tagged v<version>
                           (default quay.io/coreos/etcd; a mirror for air-gapped clusters)
  --image-pull-secret NAME a Secret in each EtcdCluster's namespace to pull the etcd and agent
                           images with, on every Pod and Job the manager makes (repeatable)
  --member-requests LIST   requests of an etcd container whose cluster sets no spec.resources,
                           e.g. cpu=100m,memory=256Mi (default none; the chart sets that)
  --job-requests LIST      requests of the snapshot and restore Jobs' agent, e.g.
                           cpu=10m,memory=64Mi (default none; the chart sets that)
  --log-level LEVEL        trace, debug, info, warn or error (default info)
  --max-probe-interval S   longest wait, in seconds, between two etcd probes of a steady cluster
                           that stays the same (default 120; 15 probes every 15 s)
  --secret-read-interval S how often, in seconds, a cluster's TLS Secrets are read again for a new
                           operator certificate or CA (default 60)
`;

/** A flag the manager does not understand, or a value it cannot use. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'ERR_MANAGER_CONFIG';
}

const BOOL: Readonly<Record<string, boolean>> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
};
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

/** Parses the flags; `env` gives POD_NAME, POD_NAMESPACE and HOSTNAME. Throws ConfigError. */
export function parseManagerArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): ManagerConfig {
  const known = [
    'kubeconfig',
    'namespace',
    'journal',
    'listen',
    'debug-listen',
    'leader-elect',
    'lease-name',
    'lease-namespace',
    'etcd-address',
    'agent-image',
    'etcd-image-repository',
    'image-pull-secret',
    'member-requests',
    'job-requests',
    'log-level',
    'max-probe-interval',
    'secret-read-interval',
  ];
  const flags = new Map<string, string>();
  const pullSecretNames: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.includes(name)) throw new ConfigError(`unknown flag --${name}`);
    let value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1];
    if (eq < 0) {
      // A boolean flag may stand alone: --leader-elect means true.
      if (name === 'leader-elect' && (value === undefined || value.startsWith('--'))) value = 'true';
      else i++;
    }
    if (value === undefined) throw new ConfigError(`--${name} needs a value`);
    if (name === 'image-pull-secret') pullSecretNames.push(value);
    flags.set(name, value);
  }

  const listen = hostPort('listen', flags.get('listen') ?? ':8080');
  const debug = flags.get('debug-listen');
  const debugListen = debug === undefined || debug === '' ? undefined : hostPort('debug-listen', debug);
  const elect = BOOL[(flags.get('leader-elect') ?? 'true').toLowerCase()];
  if (elect === undefined) throw new ConfigError(`--leader-elect ${flags.get('leader-elect')}: want true or false`);
  const address = flags.get('etcd-address') ?? 'dns';
  if (address !== 'dns' && address !== 'pod-ip') throw new ConfigError(`--etcd-address ${address}: want dns or pod-ip`);
  const level = flags.get('log-level') ?? 'info';
  if (!LEVELS.includes(level)) throw new ConfigError(`--log-level ${level}: want one of ${LEVELS.join(', ')}`);
  const journal = flags.get('journal') ?? '/var/lib/etcd-operator/journal.db';
  if (journal === '') throw new ConfigError('--journal cannot be empty');
  const probeSeconds = Number(flags.get('max-probe-interval') ?? '120');
  if (!Number.isInteger(probeSeconds) || probeSeconds < 15)
    throw new ConfigError(`--max-probe-interval ${flags.get('max-probe-interval')}: want whole seconds, 15 or more`);
  const secretSeconds = Number(flags.get('secret-read-interval') ?? '60');
  if (!Number.isInteger(secretSeconds) || secretSeconds < 1)
    throw new ConfigError(`--secret-read-interval ${flags.get('secret-read-interval')}: want whole seconds, 1 or more`);
  const repository = flags.get('etcd-image-repository') ?? DEFAULT_ETCD_IMAGE_REPOSITORY;
  // A tag or digest would be doubled by the v<version> the manager appends; a registry's :port is fine.
  const lastPart = repository.slice(repository.lastIndexOf('/') + 1);
  if (repository === '' || repository.includes('@') || lastPart.includes(':'))
    throw new ConfigError(
      `--etcd-image-repository ${repository}: want a repository without a tag, e.g. mirror.example:5000/etcd`,
    );
  for (const n of pullSecretNames)
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n))
      throw new ConfigError(`--image-pull-secret ${n}: not a Secret name`);
  const memberRequests = requests('member-requests', flags.get('member-requests') ?? '');
  const jobRequests = requests('job-requests', flags.get('job-requests') ?? '');

  return {
    ...(flags.has('kubeconfig') ? { kubeconfig: flags.get('kubeconfig') } : {}),
    ...(flags.get('namespace') ? { namespace: flags.get('namespace') } : {}),
    ...(flags.get('agent-image') ? { agentImage: flags.get('agent-image') } : {}),
    journal,
    listenHost: listen.host,
    listenPort: listen.port,
    ...(debugListen ? { debugListen } : {}),
    leaderElect: elect,
    leaseName: flags.get('lease-name') ?? 'etcd-operator',
    leaseNamespace: flags.get('lease-namespace') ?? env.POD_NAMESPACE ?? 'default',
    etcdAddress: address,
    pods: {
      etcdImageRepository: repository,
      ...(pullSecretNames.length ? { imagePullSecrets: [...new Set(pullSecretNames)] } : {}),
      ...(memberRequests ? { memberResources: memberRequests } : {}),
      ...(jobRequests ? { jobResources: jobRequests } : {}),
    },
    logLevel: level,
    maxProbeIntervalMs: probeSeconds * 1000,
    secretReadIntervalMs: secretSeconds * 1000,
    identity: env.POD_NAME ?? `${env.HOSTNAME ?? 'manager'}-${process.pid}`,
  };
}

/** HOST:PORT with an empty host meaning every interface; throws ConfigError naming the flag. */
function hostPort(flag: string, value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(':');
  const port = Number(value.slice(colon + 1));
  if (colon < 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`--${flag} ${value}: want HOST:PORT, e.g. :8080 or 127.0.0.1:0`);
  return { host: value.slice(0, colon).replace(/^\[(.*)\]$/, '$1') || '0.0.0.0', port };
}

/** `cpu=100m,memory=256Mi` as resource requests; "" means none. Throws ConfigError naming the flag. */
function requests(flag: string, value: string): V1ResourceRequirements | undefined {
  if (value.trim() === '') return undefined;
  const out: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const [key, quantity, more] = pair.split('=').map((x) => x.trim());
    if (!key || !quantity || more !== undefined || !/^[0-9.]+([a-zA-Z]{0,2})$/.test(quantity))
      throw new ConfigError(`--${flag} ${value}: want NAME=QUANTITY,..., e.g. cpu=100m,memory=256Mi`);
    out[key] = quantity;
  }
  return { requests: out };
}
