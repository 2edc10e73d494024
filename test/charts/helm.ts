/** The pinned Helm (built once by localcluster/tools/build.sh) and the chart it renders and installs. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ToolError } from '../../localcluster/controlplane/errors.ts';
import { binary } from '../../localcluster/controlplane/tools.ts';

/** The chart in this repository. */
export const chartDir = path.join(import.meta.dirname, '..', '..', 'charts', 'etcd-operator');

/** The Kubernetes version the local cluster runs; `helm template` checks the chart's kubeVersion against it. */
export const kubeVersion = '1.37.2';

/** The pinned helm's path. */
export function helmPath(): Promise<string> {
  return binary('helm');
}

/** Options of helm(). */
export interface HelmOptions {
  /** Its HOME: where helm keeps its config and cache, and client-go its discovery cache (~/.kube/cache). */
  readonly home?: string;
  /** Kill helm after this long; default 2 minutes. */
  readonly timeoutMs?: number;
}

/** Runs helm with args and returns its stdout; throws a ToolError with its stderr when it fails. */
export async function helm(args: readonly string[], opts: HelmOptions = {}): Promise<string> {
  const bin = await helmPath();
  const env = { ...process.env };
  if (opts.home) {
    for (const k of ['XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'KUBECACHEDIR']) delete env[k];
    env.HOME = opts.home;
  }
  return new Promise((resolve, reject) => {
    execFile(bin, args, { env, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err)
        reject(new ToolError('helm', `${args.join(' ')} failed: ${stderr.trim() || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

/** One rendered Kubernetes object, as loosely typed as YAML gives it. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** `helm template` of the chart with `--set` values, parsed into its objects. */
export async function renderChart(
  set: Readonly<Record<string, string>> = {},
  namespace = 'etcd-operator-system',
): Promise<KubeObject[]> {
  const sets = Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  const out = await helm([
    'template',
    'etcd-operator',
    chartDir,
    '--namespace',
    namespace,
    '--kube-version',
    kubeVersion,
    ...sets,
  ]);
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}
