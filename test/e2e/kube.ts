/** kubectl for end-to-end tests, bound to the local cluster that test/e2e/setup.ts started. */
import type { CoreV1Api } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { kubeconfigArgs, runKubectl } from '../../localcluster/controlplane/kubectl.ts';
import type { KubectlResult } from '../../localcluster/types.ts';

/** kubectl ended with a non-zero exit where the test needed it to succeed. */
export class KubectlError extends Error {
  override readonly name = 'KubectlError';
  readonly code = 'ERR_KUBECTL';
  readonly result: KubectlResult;
  constructor(args: readonly string[], result: KubectlResult) {
    super(`kubectl ${args.join(' ')} exited ${result.code}: ${(result.stderr || result.stdout).trim()}`);
    this.result = result;
  }
}

/** Options of kubectl(). */
export interface KubectlOptions {
  /** Written to kubectl's stdin (for `-f -`). */
  readonly input?: string;
  /** Throw a KubectlError on a non-zero exit; default false (the result carries the code). */
  readonly check?: boolean;
  /** Another kubeconfig than the injected one (a second control plane, say). */
  readonly kubeconfig?: string;
}

/** Runs the pinned kubectl as cluster admin of the test cluster. */
export async function kubectl(args: readonly string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const kubeconfig = opts.kubeconfig ?? inject('kubeconfig');
  const result = await runKubectl(inject('kubectlPath'), [...kubeconfigArgs(kubeconfig), ...args], opts.input);
  if (opts.check && result.code !== 0) throw new KubectlError(args, result);
  return result;
}

/** `kubectl apply -f -` of one or more YAML documents; throws a KubectlError when refused. */
export async function applyManifest(
  yamlText: string,
  opts: Omit<KubectlOptions, 'input' | 'check'> = {},
): Promise<string> {
  const result = await kubectl(['apply', '-f', '-'], { ...opts, input: yamlText, check: true });
  return result.stdout;
}

/** `kubectl get -o json` parsed; throws a KubectlError when the object is not there. */
export async function getJson<T = Record<string, unknown>>(
  args: readonly string[],
  opts: KubectlOptions = {},
): Promise<T> {
  const result = await kubectl(['get', ...args, '-o', 'json'], { ...opts, check: true });
  return JSON.parse(result.stdout) as T;
}

/** One line of the Events table `kubectl describe` prints. */
export interface DescribedEvent {
  readonly type: string;
  readonly reason: string;
  /** `5s`, or `2s (x16 over 14s)` for an Event seen 16 times. */
  readonly age: string;
  readonly from: string;
  readonly message: string;
}

/** The Events of `kubectl describe KIND NAME`, in the order kubectl prints them. */
export async function describedEvents(kind: string, name: string, namespace: string): Promise<DescribedEvent[]> {
  const { stdout } = await kubectl(['describe', kind, name, '-n', namespace], { check: true });
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith('Events:'));
  if (at < 0 || lines[at]?.includes('<none>')) return [];
  // A header and a rule first; kubectl pads its columns with at least two spaces.
  return lines
    .slice(at + 3)
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const [type = '', reason = '', age = '', from = '', ...message] = l.trim().split(/ {2,}/);
      return { type, reason, age, from, message: message.join('  ') };
    });
}

/** The reasons of the Events in `namespace` about objects of `kind`: for the operator's, the steps their machines took. */
export async function eventReasons(core: CoreV1Api, namespace: string, kind: string): Promise<Set<string>> {
  const events = (await core.listNamespacedEvent({ namespace })).items;
  return new Set(events.filter((e) => e.involvedObject.kind === kind).map((e) => e.reason ?? ''));
}
