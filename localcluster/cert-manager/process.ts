/**
 * cert-manager's controller as a process on this machine with the admin kubeconfig: the way it
 * runs on a cluster without nodes (control plane only), where no Pod can start.
 */
import path from 'node:path';
import { freePort } from '../controlplane/ports.ts';
import type { Proc } from '../controlplane/process.ts';
import { startProcess, waitReady } from '../controlplane/process.ts';
import { binary } from '../controlplane/tools.ts';
import type { Log } from '../types.ts';
import { clusterResourceNamespace } from './manifest.ts';

/**
 * Starts the controller (a controller left running in dir is killed first) and resolves once its
 * /healthz says ok (every informer synced). Its log is `<dir>/cert-manager.log`.
 */
export async function startControllerProcess(dir: string, kubeconfigPath: string, log?: Log): Promise<Proc> {
  const healthPort = await freePort();
  const proc = await startProcess({
    name: 'cert-manager',
    bin: await binary('cert-manager'),
    dir: path.resolve(dir),
    log,
    args: [
      `--kubeconfig=${kubeconfigPath}`,
      `--cluster-resource-namespace=${clusterResourceNamespace}`,
      `--health-address=127.0.0.1:${healthPort}`,
      // The Helm chart's default verbosity: one line per issuance step.
      '--v=2',
    ],
  });
  try {
    await waitReady(proc, healthProbe(`http://127.0.0.1:${healthPort}/healthz`), 60_000);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return proc;
}

function healthProbe(url: string): () => Promise<string | true> {
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.text()).trim();
    return res.status === 200 && body === 'ok' ? true : `${res.status}: ${body}`;
  };
}
