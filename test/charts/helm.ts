/** The pinned Helm (built once by test/cluster/tools/build.sh) and the chart it renders and installs. */
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { binary, run } from '../cluster/controlplane/tools.ts';

/** The chart in this repository. */
export const chartDir = path.join(import.meta.dirname, '..', '..', 'charts', 'etcd-operator');

/** The Kubernetes version the local cluster runs; `helm template` checks the chart's kubeVersion against it. */
export const kubeVersion = '1.34.4';

/** The pinned helm's path. */
export function helmPath(): Promise<string> {
  return binary('helm');
}

/** Runs helm with args and returns its stdout; throws a ToolError with its stderr when it fails. */
export async function helm(args: readonly string[], timeoutMs = 120_000): Promise<string> {
  return run(await helmPath(), args, timeoutMs);
}

/** One rendered Kubernetes object, as loosely typed as YAML gives it. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** `helm template` of the chart with `--set` values, parsed into its objects. */
export async function renderChart(set: Readonly<Record<string, string>> = {}, namespace = 'etcd-operator-system'): Promise<KubeObject[]> {
  const sets = Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  const out = await helm(['template', 'etcd-operator', chartDir, '--namespace', namespace, '--kube-version', kubeVersion, ...sets]);
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}
