/**
 * `make cluster`: runs the local Kubernetes in the foreground until Ctrl-C or SIGTERM.
 *
 *   node localcluster/main.ts [--control-plane-only]
 *
 * Env: LOCALCLUSTER_DIR (state dir, default <cache>/run/local-cluster), LOCALCLUSTER_NODE=0
 * (same as --control-plane-only), LOCALCLUSTER_NODES (how many nodes, default 3; 'real', the kind
 * they are, is taken as the default count),
 * LOCALCLUSTER_VERBOSE=1 (print every part's log here too), LOCALCLUSTER_CERT_MANAGER=1
 * (cert-manager's CRDs and controller too).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { kubectlPath } from './controlplane/index.ts';
import { installCrds } from './crds.ts';
import { defaultClusterDir, nodeCountFromEnv, startLocalCluster } from './index.ts';
import type { LocalCluster } from './index.ts';

const withNode = !process.argv.includes('--control-plane-only') && process.env.LOCALCLUSTER_NODE !== '0';
const dir = path.resolve(process.env.LOCALCLUSTER_DIR || defaultClusterDir());

// Only the nodes need root (namespaces, mounts, cgroups); the control plane does not.
if (withNode && process.getuid?.() !== 0) {
  console.error(
    'make cluster: the nodes (kubelet, containerd) need root: namespaces, mounts and cgroups of their own.\n' +
      'Run it as root, or start the control plane alone: LOCALCLUSTER_NODE=0 make cluster',
  );
  process.exit(1);
}

mkdirSync(dir, { recursive: true });
const logFile = path.join(dir, 'cluster.log');
const verbose = process.env.LOCALCLUSTER_VERBOSE === '1';
const log = (line: string): void => {
  appendFileSync(logFile, line + '\n');
  if (verbose) console.log(line);
};

let cluster: LocalCluster | undefined;
let stopping = false;
const stopAndExit = (): void => {
  void (cluster?.stop() ?? Promise.resolve()).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
};
const shutdown = (signal: string): void => {
  if (stopping) process.exit(130); // a second Ctrl-C does not wait: the children die with this process
  stopping = true;
  console.log(`\n${signal}: stopping the local cluster (Ctrl-C again to kill it at once)...`);
  // While starting, the start finishes first so that every started process is stopped.
  if (cluster) stopAndExit();
};
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));

const started = Date.now();
console.log(`starting the local cluster in ${dir} (${withNode ? 'control plane and nodes' : 'control plane only'})`);
try {
  const certManager = process.env.LOCALCLUSTER_CERT_MANAGER === '1';
  const nodes = nodeCountFromEnv();
  cluster = await startLocalCluster({ dir, node: withNode, nodes, certManager, log });
  await installCrds(cluster.kubectl);
} catch (err) {
  console.error(`make cluster: ${err instanceof Error ? err.message : String(err)}`);
  console.error(`logs: ${dir}/controlplane/*.log and ${logFile}`);
  await cluster?.stop().catch(() => undefined);
  process.exit(1);
}
// Keeps the process alive until a signal; shutdown() exits.
setInterval(() => undefined, 1 << 30);
const kubectl = await kubectlPath();
if (stopping) stopAndExit();
else
  console.log(`
local cluster ready in ${((Date.now() - started) / 1000).toFixed(1)} s; API server ${cluster.controlPlane.server}

  export KUBECONFIG=${cluster.kubeconfigPath}
  export PATH=${path.dirname(kubectl)}:$PATH   # the pinned kubectl

  kubectl get namespaces
  kubectl get crds
  kubectl explain etcdcluster.spec
  kubectl apply -f examples/etcdcluster.yaml${withNode ? '\n  kubectl get pods -A -o wide' : ''}

${cluster.registryHost ? `registry the nodes pull from: ${cluster.registryHost} (plain HTTP; the e2e take it as LOCALCLUSTER_REGISTRY)\n` : ''}logs: ${dir}/controlplane/*.log and ${logFile}
Ctrl-C stops it; the state stays in ${dir}, so the next start resumes with the same objects.`);
