/**
 * cert-manager on the local cluster: its CRDs, then its controller, on a cluster with nodes as the
 * Helm chart deploys it (a Deployment of quay.io/jetstack/cert-manager-controller, pulled from the
 * local registry: pod.ts), on a cluster without nodes as a process on this machine (process.ts).
 * Started only when asked (a test, or `startLocalCluster({ certManager: true })`); see
 * docs/development.md ("cert-manager").
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { kubectlFor } from '../controlplane/kubectl.ts';
import { binary } from '../controlplane/tools.ts';
import { installCrds } from '../crds.ts';
import type { KubectlResult, PartOptions } from '../types.ts';
import { certManagerVersion, clusterResourceNamespace } from './manifest.ts';
import { CONTROLLER_DEPLOYMENT, podLogLines, startControllerPod } from './pod.ts';
import { startControllerProcess } from './process.ts';

export { CERT_MANAGER_CONTROLLER_IMAGE, certManagerVersion, clusterResourceNamespace } from './manifest.ts';

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
  /** The cluster's admin kubeconfig: kubectl's, and the process's on a cluster without nodes. */
  readonly kubeconfigPath: string;
  /**
   * true: the controller runs on the cluster's nodes, as a Deployment of the upstream image;
   * false, for a cluster without nodes only: as a process on this machine with the admin kubeconfig.
   */
  readonly onNodes: boolean;
}

/**
 * Where the controller's log is read, as plain data (test/e2e/setup.ts hands it to the test files):
 * its Pod's through kubectl, or the process's file.
 */
export type CertManagerLog =
  { readonly pod: { readonly namespace: string; readonly deployment: string } } | { readonly file: string };

/** The running controller. */
export interface CertManager {
  readonly version: string;
  /** Where it runs: a Pod on the nodes, or a process on this machine (a cluster without nodes). */
  readonly runsOn: 'nodes' | 'machine';
  readonly log: CertManagerLog;
  /**
   * Milliseconds each start step took: crds (and the namespace), controller (to Ready: every
   * informer synced); on the nodes also podCreatedToReady (the API's whole-second timestamps),
   * on the machine binary (build.sh's lookup) before them.
   */
  readonly timings: Readonly<Record<string, number>>;
  /** The last lines of its log, for a failure's message. */
  lastLines(): Promise<string[]>;
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
 * Applies the pinned release's CRDs (waiting until they are served), makes the `cert-manager`
 * namespace, starts the controller (onNodes says where) and resolves once its informers have
 * synced. The process's log is `<dir>/cert-manager.log`; the Pod's is copied there at stop().
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
  if (!opts.onNodes) {
    await binary('cert-manager');
    step('binary');
  }
  const kubectl = kubectlFor(opts.kubeconfigPath);
  await installCertManagerCrds(opts.kubeconfigPath);
  const ns = await kubectl(['create', 'namespace', clusterResourceNamespace]);
  if (ns.code !== 0 && !ns.stderr.includes('AlreadyExists'))
    throw new CertManagerSetupError(`kubectl create namespace ${clusterResourceNamespace}`, ns);
  step('crds');
  const base = { version: certManagerVersion, timings };
  if (opts.onNodes) {
    const pod = await startControllerPod(kubectl, dir);
    step('controller');
    timings.podCreatedToReady = pod.createdToReadyMs;
    const { namespace, deployment } = CONTROLLER_DEPLOYMENT;
    opts.log?.(`cert-manager: controller Ready on the nodes (kubectl logs -n ${namespace} deployment/${deployment})`);
    const log = { pod: CONTROLLER_DEPLOYMENT };
    return { ...base, runsOn: 'nodes', log, lastLines: () => podLogLines(kubectl), stop: () => pod.stop() };
  }
  opts.log?.('cert-manager: the cluster has no nodes; the controller runs as a process on this machine');
  const proc = await startControllerProcess(dir, opts.kubeconfigPath, opts.log);
  step('controller');
  return {
    ...base,
    runsOn: 'machine',
    log: { file: proc.logPath },
    lastLines: () => Promise.resolve(proc.lastLines()),
    stop: () => proc.stop(),
  };
}

/** The last lines of the log `log` names (the Pod's through kubectl with this kubeconfig); [] when unreadable. */
export async function certManagerLogLines(log: CertManagerLog, kubeconfigPath: string, n = 40): Promise<string[]> {
  if ('pod' in log) return podLogLines(kubectlFor(kubeconfigPath), n, log.pod);
  const text = await readFile(log.file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-n);
}
