/**
 * `make dev`: the main job on the local Kubernetes. A fresh local cluster, the CRDs, the
 * manager, then examples/etcdcluster.yaml applied (and an S3-compatible server for the
 * snapshot examples); every step of the machines is printed as it happens, then how to use
 * kubectl against it, the statechart command and the debug page's address. With
 * EXIT_WHEN_READY=1 it exits 0 once the EtcdCluster is Available, printing the time taken
 * (non-zero if it is not within 5 minutes).
 *
 * Env: DEV_DIR (state dir, default <cache>/run/dev; emptied at start), EXIT_WHEN_READY=1.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { kubectlPath } from './controlplane/index.ts';
import { installCrds } from './crds.ts';
import { defaultClusterDir, startLocalCluster, type LocalCluster } from './index.ts';
import { startManager, type ManagerLine, type ManagerProcess } from './manager-process.ts';
import { S3_CREDENTIALS, startS3 } from './s3-server.ts';
import { clientsOf, createNamespace } from './clients.ts';

const repo = path.join(import.meta.dirname, '..');
const example = path.join(repo, 'examples', 'etcdcluster.yaml');
const dir = path.resolve(process.env.DEV_DIR || path.join(path.dirname(defaultClusterDir()), 'dev'));
const exitWhenReady = process.env.EXIT_WHEN_READY === '1';
const started = Date.now();
const since = (t = started): string => `${((Date.now() - t) / 1000).toFixed(1).padStart(5)} s`;

if (process.getuid?.() !== 0) {
  console.error('make dev: the nodes (kubelet, containerd) need root: namespaces, mounts and cgroups of their own.');
  process.exit(1);
}

let cluster: LocalCluster | undefined;
let manager: ManagerProcess | undefined;
/** The debug page's port, from the manager's log line that says where it serves it. */
let debugPort: number | undefined;
let stopping = false;
const stop = async (code: number): Promise<never> => {
  stopping = true;
  await manager?.stop().catch(() => undefined);
  await cluster?.stop().catch(() => undefined);
  process.exit(code);
};
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

/** One line per machine step: which object, from where to where, on what, asking for what. */
function printStep(line: ManagerLine): void {
  if (typeof line.debugPort === 'number') debugPort = line.debugPort;
  if (line.msg !== 'step') {
    if (line.level >= 40)
      console.log(`${since()}  ! ${line.msg}${typeof line.err === 'string' ? `: ${line.err}` : ''}`);
    return;
  }
  const intents = (line.intents as string[]).length ? `  -> ${(line.intents as string[]).join(', ')}` : '';
  const moved = line.from === line.to ? String(line.to) : `${String(line.from)} => ${String(line.to)}`;
  console.log(
    `${since()}  ${String(line.machine).padEnd(7)} ${String(line.object).padEnd(16)} ${moved}  (on ${String(line.event)})${intents}`,
  );
}

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const logFile = path.join(dir, 'cluster.log');
console.log(`make dev: a fresh local cluster in ${dir}`);
try {
  cluster = await startLocalCluster({
    dir: path.join(dir, 'cluster'),
    node: true,
    log: (l) => appendFileSync(logFile, l + '\n'),
  });
  await installCrds(cluster.kubectl);
  console.log(`${since()}  local cluster and CRDs ready; starting the manager`);
  manager = await startManager({
    kubeconfig: cluster.kubeconfigPath,
    dir: path.join(dir, 'manager'),
    args: ['--debug-listen', '127.0.0.1:0'],
    onLine: printStep,
  });
  void manager.exited.then((code) => {
    if (stopping) return;
    console.error(`make dev: the manager exited (${code}); its log is above`);
    void stop(1);
  });
  const applied = await cluster.kubectl(['apply', '-f', example]);
  if (applied.code !== 0) throw new Error(`kubectl apply -f examples/etcdcluster.yaml: ${applied.stderr.trim()}`);
  console.log(`${since()}  applied examples/etcdcluster.yaml`);
} catch (err) {
  console.error(`make dev: ${err instanceof Error ? err.message : String(err)}\nlogs: ${logFile}`);
  await stop(1);
}

const { metadata } = parse(readFileSync(example, 'utf8')) as { metadata: { name: string; namespace?: string } };
const name = metadata.name;
const namespace = metadata.namespace ?? 'default';
const applyAt = Date.now();
// Available (a quorum serves) comes with the seed; the job is done when every member is in.
for (const condition of ['--for=condition=Available', '--for=jsonpath={.status.observed.step}=Steady']) {
  const wait = await cluster!.kubectl(['wait', `etcdcluster/${name}`, '-n', namespace, condition, '--timeout=300s']);
  if (wait.code === 0) continue;
  console.error(`make dev: ${name} did not become Available and Steady within 5 minutes: ${wait.stderr.trim()}`);
  if (exitWhenReady) await stop(1);
}
// The S3-compatible server the examples store snapshots to (examples/etcdsnapshot.yaml):
// s3.storage.svc:7070, its keys in the Secret s3-credentials of the cluster's namespace.
const kube = clientsOf(cluster!.kubeconfigPath);
await createNamespace(kube.core, 'storage');
const s3 = await startS3(kube, 'storage');
s3.client.destroy();
await kube.core.createNamespacedSecret({
  namespace,
  body: { metadata: { name: 's3-credentials' }, stringData: S3_CREDENTIALS },
});
const kubectl = await kubectlPath();
console.log(`
${name} is Available with every member in: ${since(applyAt)} after kubectl apply (${since()} since make dev started).

  export KUBECONFIG=${cluster!.kubeconfigPath}
  export PATH=${path.dirname(kubectl)}:$PATH   # the pinned kubectl

  kubectl get etcdclusters,etcdmembers,pods
  kubectl describe etcdcluster ${name}
  kubectl scale etcdcluster ${name} --replicas=5
  kubectl apply -f examples/etcdsnapshot.yaml && kubectl get etcdsnapshots -w   # to S3 (s3.storage.svc)
  kubectl apply -f examples/etcdcluster-restored.yaml                          # a new cluster from it
  node manager/cli.ts journal ${name} --db ${path.join(dir, 'manager', 'journal.db')}
  node manager/cli.ts statechart ${name} --db ${path.join(dir, 'manager', 'journal.db')} -o ${name}.svg   # its chart, its path overlaid

The debug page (every object, its live state chart and timeline): ${debugPort === undefined ? '(not served: see the log above)' : `http://127.0.0.1:${debugPort}/`}
The manager's /metrics, /healthz and /readyz: http://127.0.0.1:${manager!.port}
${exitWhenReady ? 'EXIT_WHEN_READY=1: stopping.' : 'Ctrl-C stops the manager and the cluster.'}`);
if (exitWhenReady) await stop(0);
setInterval(() => undefined, 1 << 30);
