/**
 * cert-manager on the local cluster: its CRDs, then its controller as a local process with
 * the admin kubeconfig, as for the control plane. Started only when asked (a test, or
 * `startLocalCluster({ certManager: true })`); see docs/development.md ("cert-manager").
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { kubectlFor } from '../controlplane/kubectl.ts';
import { freePort } from '../controlplane/ports.ts';
import type { Proc } from '../controlplane/process.ts';
import { startProcess, waitReady } from '../controlplane/process.ts';
import { binary, pinnedRelease } from '../controlplane/tools.ts';
import { installCrds } from '../crds.ts';
import type { KubectlResult, PartOptions } from '../types.ts';

/** The cert-manager release localcluster/tools/cert-manager/go.mod pins, e.g. `v1.21.2`. */
export const certManagerVersion: string = pinnedRelease('cert-manager', 'github.com/cert-manager/cert-manager');

/** Where a ClusterIssuer's Secrets live, as in cert-manager's Helm chart. */
export const clusterResourceNamespace = 'cert-manager';

/** The cluster refused the namespace cert-manager needs. */
export class CertManagerSetupError extends Error {
  override readonly name = 'CertManagerSetupError';
  readonly code = 'ERR_CERT_MANAGER_SETUP';
  constructor(step: string, result: KubectlResult) {
    super(`${step} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim()}`);
  }
}

/** Options of startCertManager. */
export interface CertManagerOptions extends PartOptions {
  /** The cluster's admin kubeconfig; the controller acts as cluster admin. */
  readonly kubeconfigPath: string;
}

/** The running controller. */
export interface CertManager {
  readonly version: string;
  readonly proc: Proc;
  /** Milliseconds each start step took: binary, crds, controller (to /healthz ok). */
  readonly timings: Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

/**
 * The pinned release's CRDs alone (build.sh copies them beside the binary), served once this
 * resolves: what a cluster that runs cert-manager has, for a test that asks about its kinds.
 */
export async function installCertManagerCrds(kubeconfigPath: string): Promise<void> {
  const bin = await binary('cert-manager');
  await installCrds(kubectlFor(kubeconfigPath), path.join(path.dirname(bin), 'crds'));
}

/**
 * Applies the pinned release's CRDs (waiting until they are served), makes the
 * `cert-manager` namespace, starts the controller and waits until its informers have synced.
 * The log is `<dir>/cert-manager.log`; a controller left running in dir is killed first.
 */
export async function startCertManager(opts: CertManagerOptions): Promise<CertManager> {
  const dir = path.resolve(opts.dir);
  const timings: Record<string, number> = {};
  let mark = Date.now();
  const step = (name: string): void => {
    timings[name] = Date.now() - mark;
    mark = Date.now();
  };
  await mkdir(dir, { recursive: true });
  const bin = await binary('cert-manager');
  step('binary');
  const kubectl = kubectlFor(opts.kubeconfigPath);
  await installCertManagerCrds(opts.kubeconfigPath);
  const ns = await kubectl(['create', 'namespace', clusterResourceNamespace]);
  if (ns.code !== 0 && !ns.stderr.includes('AlreadyExists'))
    throw new CertManagerSetupError(`kubectl create namespace ${clusterResourceNamespace}`, ns);
  step('crds');
  const healthPort = await freePort();
  const proc = await startProcess({
    name: 'cert-manager',
    bin,
    dir,
    log: opts.log,
    args: [
      `--kubeconfig=${opts.kubeconfigPath}`,
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
  step('controller');
  return { version: certManagerVersion, proc, timings, stop: () => proc.stop() };
}

function healthProbe(url: string): () => Promise<string | true> {
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.text()).trim();
    return res.status === 200 && body === 'ok' ? true : `${res.status}: ${body}`;
  };
}
