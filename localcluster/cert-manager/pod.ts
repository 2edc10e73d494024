/**
 * cert-manager's controller on the cluster's nodes: manifest.ts's objects applied, the Deployment
 * of the upstream image (pulled from the local registry under its real name) rolled out, and
 * deleted again with its Pod. Its log is the Pod's (`kubectl logs`), kept in the part's dir at stop.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Kubectl, KubectlResult } from '../types.ts';
import { clusterResourceNamespace as ns, controllerObjects, CONTROLLER_NAME, CONTROLLER_SELECTOR } from './manifest.ts';

/** kubectl refused the controller's objects, or its Pod did not become Ready. */
export class CertManagerPodError extends Error {
  override readonly name = 'CertManagerPodError';
  readonly code = 'ERR_CERT_MANAGER_POD';
  constructor(step: string, result: KubectlResult, diagnosis = '') {
    super(`${step} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim()}${diagnosis}`);
  }
}

/** The running Deployment. */
export interface ControllerPod {
  /** Milliseconds from the Pod's creation to its Ready condition, by the API's (whole-second) timestamps. */
  readonly createdToReadyMs: number;
  /** Keeps the Pod's log in `<dir>/cert-manager.log`, then deletes every object and waits until the Pod is gone. */
  stop(): Promise<void>;
}

/** The controller's Deployment. */
export const CONTROLLER_DEPLOYMENT = { namespace: ns, deployment: CONTROLLER_NAME } as const;

/** `kubectl logs` of a Deployment's Pod (the controller's by default), the last `tail` lines (-1: all). */
export async function podLogLines(
  kubectl: Kubectl,
  tail = 40,
  of: { readonly namespace: string; readonly deployment: string } = CONTROLLER_DEPLOYMENT,
): Promise<string[]> {
  const logs = await kubectl(['logs', '-n', of.namespace, `deployment/${of.deployment}`, `--tail=${tail}`]);
  return (logs.code === 0 ? logs.stdout : `(kubectl logs: ${logs.stderr.trim()})`).trimEnd().split('\n');
}

/**
 * Applies the controller's objects (the namespace made before) and resolves once its Deployment
 * has rolled out: the Pod Ready, which its readiness probe says once every informer has synced.
 */
export async function startControllerPod(kubectl: Kubectl, dir: string, timeoutS = 180): Promise<ControllerPod> {
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: controllerObjects() });
  const applied = await kubectl(['apply', '-f', '-'], { input: list });
  if (applied.code !== 0) throw new CertManagerPodError('kubectl apply of the cert-manager controller', applied);
  const deployment = `deployment/${CONTROLLER_NAME}`;
  const rollout = await kubectl(['rollout', 'status', deployment, '-n', ns, `--timeout=${timeoutS}s`]);
  if (rollout.code !== 0)
    throw new CertManagerPodError(`kubectl rollout status ${deployment}`, rollout, await diagnose(kubectl));
  return {
    createdToReadyMs: await createdToReady(kubectl),
    stop: async () => {
      await mkdir(dir, { recursive: true });
      const lines = await podLogLines(kubectl, -1);
      await appendFile(
        path.join(dir, 'cert-manager.log'),
        `\n--- ${new Date().toISOString()} kubectl logs -n ${ns} ${deployment}\n${lines.join('\n')}\n`,
      );
      const deleted = await kubectl(
        ['delete', '-f', '-', '--ignore-not-found', '--cascade=foreground', '--wait', '--timeout=90s'],
        { input: list },
      );
      if (deleted.code !== 0) throw new CertManagerPodError('kubectl delete of the cert-manager controller', deleted);
    },
  };
}

/** The Ready Pod's creation to Ready, from its timestamps. */
async function createdToReady(kubectl: Kubectl): Promise<number> {
  const selector = Object.entries(CONTROLLER_SELECTOR)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const got = await kubectl(['get', 'pods', '-n', ns, '-l', selector, '-o', 'json']);
  if (got.code !== 0) return NaN;
  const pods = (
    JSON.parse(got.stdout) as {
      items: {
        metadata: { creationTimestamp: string };
        status?: { conditions?: { type: string; status: string; lastTransitionTime: string }[] };
      }[];
    }
  ).items;
  for (const pod of pods) {
    const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    if (ready) return Date.parse(ready.lastTransitionTime) - Date.parse(pod.metadata.creationTimestamp);
  }
  return NaN;
}

/** The Pods, their events and their last log lines: why a rollout did not finish. */
async function diagnose(kubectl: Kubectl): Promise<string> {
  const out = (r: KubectlResult): string => (r.stdout + r.stderr).trim();
  const pods = await kubectl(['get', 'pods', '-n', ns, '-o', 'wide']);
  const events = await kubectl(['get', 'events', '-n', ns, '--sort-by=.lastTimestamp']);
  const logs = await podLogLines(kubectl);
  return `\npods:\n${out(pods)}\nevents:\n${out(events)}\nlog:\n${logs.join('\n')}`;
}
