/**
 * A release of the chart installed into the local cluster with helm, as a user does it, and what
 * the chart e2e files ask of it: its Pods, and the API server's authorizer (`kubectl auth can-i`).
 */
import { inject } from 'vitest';
import { chartDir, helm } from '../charts/helm.ts';
import { getJson, kubectl } from './kube.ts';

export interface ReleasePod {
  metadata: { name: string };
  spec: {
    nodeName?: string;
    serviceAccountName: string;
    containers: { name: string; image: string; args: string[] }[];
  };
  status: {
    phase: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { restartCount: number; state: Record<string, unknown> }[];
  };
}

/** helm's kubeconfig flag: the local cluster's (kubectl's own, with its cache dir, is localcluster's kubeconfigArgs). */
export const helmKubeconfig = (): string[] => ['--kubeconfig', inject('kubeconfig')];

/** The Pods of release `instance` in `namespace`. */
export const podsOf = async (namespace: string, instance: string): Promise<ReleasePod[]> =>
  (await getJson<{ items: ReleasePod[] }>(['pods', '-n', namespace, '-l', `app.kubernetes.io/instance=${instance}`]))
    .items;

/** `kubectl auth can-i` as user: args are the verb, the resource (or resource/name) and any flags such as --subresource. */
export const canIAs = async (user: string, args: readonly string[], namespace: string): Promise<string> =>
  (await kubectl(['auth', 'can-i', ...args, '-n', namespace, '--as', user])).stdout.trim();

/**
 * Each question's answer, asked `at` a time: each `kubectl auth can-i` is a process of its own
 * and a round trip, and the files ask dozens.
 */
export async function canIAll<Q>(questions: readonly Q[], ask: (q: Q) => Promise<string>, at = 6): Promise<string[]> {
  const answers: string[] = new Array<string>(questions.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < questions.length; i = next++) answers[i] = await ask(questions[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(at, questions.length) }, worker));
  return answers;
}

/**
 * `helm install` of the chart as release `name` in `namespace` (created), with `sets`; helm's
 * state in `home`. The manager binds its Pod IP (`listen.host`), as on a node's Pod network.
 */
export const installRelease = (home: string, name: string, namespace: string, ...sets: string[]): Promise<string> =>
  helm(
    [
      'install',
      name,
      chartDir,
      '-n',
      namespace,
      '--create-namespace',
      ...['listen.host=$(POD_IP)', ...sets].flatMap((v) => ['--set', v]),
      ...helmKubeconfig(),
    ],
    { home },
  );

/** `helm uninstall` of release `name`, if it is there; helm's state in `home`. */
export const uninstallRelease = (home: string, name: string, namespace: string): Promise<unknown> =>
  helm(['uninstall', name, '-n', namespace, '--ignore-not-found', ...helmKubeconfig()], { home }).catch(
    () => undefined,
  );
