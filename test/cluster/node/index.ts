/**
 * The process node of the local cluster: registers a Node and runs the Pods kube-scheduler
 * binds to it as local processes, each Pod in its own network namespace and each container
 * in its own mount namespace. See docs/local-node.md.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod, type V1Taint } from '@kubernetes/client-node';
import { PodNetns } from '../network/podNetns.ts';
import type { NodeAgent, NodeOptions } from '../types.ts';
import { AddressPool } from './addresses.ts';
import { kubeletBackoff } from './backoff.ts';
import { keyLookup, latestRun, newestPodDir, podLogs, unmountLeftovers } from './nodeFiles.ts';
import { startKubeletServer } from './kubeletServer.ts';
import { NodeError } from './errors.ts';
import { eventRecorder } from './events.ts';
import { registerNode } from './nodeObject.ts';
import { PodWorker } from './podWorker.ts';
import { checkHost } from './host.ts';
import { execArgv, type ExecTarget } from './containerExec.ts';
import type { ContainerRunner } from './containerRunner.ts';

export { NodeError, ImagePullError, VolumeError } from './errors.ts';
export { PRIVATE_NODE_TAINT } from './nodeObject.ts';

/** What a command run inside a container printed and how it ended. */
export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/** Options of startNode beyond the shared contract. */
export interface LocalNodeOptions extends NodeOptions {
  /** Labels the Node gets besides kubernetes.io/hostname, os and arch (its zone, say). */
  readonly labels?: Readonly<Record<string, string>>;
  /** Taints the Node is registered with (PRIVATE_NODE_TAINT for a test file's own node). */
  readonly taints?: readonly V1Taint[];
}

/** The node agent, with what tests use beyond the shared contract. */
export interface LocalNode extends NodeAgent {
  /** Runs a command inside a running container's mount namespace, with its environment, as its user. */
  exec(namespace: string, pod: string, argv: readonly string[], container?: string): Promise<ExecResult>;
}

const hostIP = '127.0.0.1';

/** What an exec enters: the runner's current run. */
function execTarget(runner: ContainerRunner, pid: number): ExecTarget {
  return { pid, env: runner.env, identity: runner.identity, workingDir: runner.spec.workingDir ?? '/' };
}

/** Whether another live Pod (of any node) holds the address. */
function podIPInUse(pods: readonly V1Pod[], ip: string, uid: string): boolean {
  return pods.some(
    (p) =>
      p.metadata?.uid !== uid &&
      p.status?.podIP === ip &&
      p.status.phase !== 'Succeeded' &&
      p.status.phase !== 'Failed',
  );
}

/** The `default/kubernetes` Service's ClusterIP and port (the API server makes it soon after it starts). */
async function kubernetesService(core: CoreV1Api): Promise<{ host: string; port: string }> {
  let last: unknown;
  for (let attempt = 0; attempt < 60; attempt++) {
    const svc = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' }).catch((err: unknown) => {
      last = err;
      return undefined;
    });
    const host = svc?.spec?.clusterIP;
    if (host) return { host, port: String(svc.spec?.ports?.[0]?.port ?? 443) };
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new NodeError('ERR_CONFIG', 'the API server has no default/kubernetes Service', { cause: last });
}

/** Starts the node agent; resolves once the Node is registered and Pods are being watched. */
export async function startNode(opts: LocalNodeOptions): Promise<LocalNode> {
  await checkHost();
  const name = opts.name ?? 'local-node';
  const log = opts.log ?? (() => undefined);
  const dir = resolve(opts.dir);
  const podsDir = join(dir, 'pods');
  mkdirSync(podsDir, { recursive: true });
  await unmountLeftovers(podsDir);
  const netns = new PodNetns(name, log);
  await netns.removeLeftovers();
  if (!existsSync(opts.hostsFile)) writeFileSync(opts.hostsFile, '127.0.0.1 localhost\n');

  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfigPath);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new NodeError('ERR_CONFIG', `${opts.kubeconfigPath} has no current cluster`);
  const caData = cluster.caData
    ? Buffer.from(cluster.caData, 'base64').toString()
    : cluster.caFile
      ? readFileSync(cluster.caFile, 'utf8')
      : '';
  const core = kc.makeApiClient(CoreV1Api);

  const workers = new Map<string, PodWorker>();
  const find = (namespace: string, pod: string): PodWorker | undefined =>
    [...workers.values()].find(
      (w) =>
        w.pod.metadata?.namespace === namespace && w.pod.metadata?.name === pod && !w.pod.metadata?.deletionTimestamp,
    ) ?? [...workers.values()].find((w) => w.pod.metadata?.namespace === namespace && w.pod.metadata?.name === pod);
  const kubelet = await startKubeletServer(dir, {
    logFileOf(namespace, pod, container, previous) {
      const worker = find(namespace, pod);
      const podDir = worker?.dir ?? newestPodDir(podsDir, namespace, pod);
      if (!podDir) return undefined;
      const runner = worker?.runner(container);
      const last = runner?.pid ? runner.rt.restartCount : latestRun(podDir, container);
      const n = previous ? last - 1 : last;
      const live = () => !!runner?.pid && runner.rt.restartCount === n;
      return n < 0 ? undefined : { file: join(podDir, 'containers', container, `${n}.log`), live };
    },
    container(namespace, pod, container) {
      const worker = find(namespace, pod);
      if (!worker) return 'pod does not exist';
      const runner = worker.runner(container);
      if (runner?.spec.name !== container) return `container not found ("${container}")`;
      const pid = runner.pid;
      if (!pid) return `container ${container} is not running`;
      const n = runner.rt.restartCount;
      return {
        ...execTarget(runner, pid),
        log: { file: join(worker.dir, 'containers', container, `${n}.log`), live: () => runner.pid === pid },
        ...(runner.stdin ? { stdin: runner.stdin } : {}),
        stdinOnce: !!runner.spec.stdinOnce,
      };
    },
    pod(namespace, pod) {
      const p = find(namespace, pod)?.pod;
      const ip = p?.status?.podIP;
      if (!p || !ip) return 'pod does not exist';
      const uid = p.metadata?.uid ?? '';
      if (!p.spec?.hostNetwork) return { name: pod, uid, addresses: [ip], netns: `/run/netns/${netns.name(uid)}` };
      return { name: pod, uid, addresses: ip === hostIP ? [ip] : [ip, hostIP] };
    },
  });
  const stopHeartbeat = await registerNode(kc, core, name, hostIP, kubelet.port, log, opts.labels, opts.taints);
  const informer = makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  // In their own network namespaces Pods reach the API server as in a cluster: its Service.
  const api = await kubernetesService(core);
  const ctx = {
    core,
    nodeName: name,
    hostIP,
    apiHost: api.host,
    apiPort: api.port,
    caData,
    hostsFile: opts.hostsFile,
    podsDir,
    addresses: new AddressPool(dir, name, (ip, uid) => podIPInUse(informer.list(), ip, uid)),
    netns,
    backoff: kubeletBackoff,
    lookup: keyLookup(core),
    event: eventRecorder(core, name, 'kubelet', log),
    log,
  };
  let stopped = false;

  const onPod = (pod: V1Pod): void => {
    if (stopped) return;
    if (pod.spec?.nodeName !== name) return;
    const uid = pod.metadata!.uid!;
    let worker = workers.get(uid);
    if (!worker) {
      worker = new PodWorker(pod, ctx);
      workers.set(uid, worker);
      if (!pod.metadata?.deletionTimestamp) worker.start();
    }
    worker.update(pod);
  };
  const onDelete = (pod: V1Pod): void => {
    const uid = pod.metadata!.uid!;
    const worker = workers.get(uid);
    workers.delete(uid);
    void worker?.kill();
  };
  informer.on('add', onPod);
  informer.on('update', onPod);
  informer.on('delete', onDelete);
  // The informer stops on an error; start it again until it runs (the API server may be down).
  const restart = (err: unknown): void => {
    if (stopped) return;
    log(`node ${name}: pod watch failed (${(err as Error)?.message ?? String(err)}); restarting`);
    setTimeout(() => void informer.start().catch(restart), 1000);
  };
  informer.on('error', restart);
  await informer.start();

  const runnerOf = (namespace: string, pod: string, container?: string) => {
    const runner = find(namespace, pod)?.runner(container);
    if (!runner)
      throw new NodeError(
        'ERR_CONFIG',
        `no container ${container ?? ''} of pod ${namespace}/${pod} runs on node ${name}`,
      );
    return runner;
  };

  return {
    name,
    killContainer(namespace, pod, container) {
      return Promise.resolve(runnerOf(namespace, pod, container).signal('SIGKILL'));
    },
    logs(namespace, pod, container) {
      return Promise.resolve(podLogs(find(namespace, pod)?.dir, podsDir, namespace, pod, container));
    },
    async exec(namespace, pod, argv, container) {
      const runner = runnerOf(namespace, pod, container);
      if (!runner.pid)
        throw new NodeError('ERR_CONFIG', `container ${runner.spec.name} of pod ${namespace}/${pod} is not running`);
      const [cmd, ...args] = execArgv(execTarget(runner, runner.pid), argv);
      return new Promise((done) => {
        execFile(cmd!, args, { env: runner.env, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
          done({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0 });
        });
      });
    },
    async stop() {
      // Once: a cluster node stopped by a test is stopped again with the cluster.
      if (stopped) return;
      stopped = true;
      stopHeartbeat();
      await kubelet.close();
      await informer.stop();
      const all = [...workers.values()];
      workers.clear();
      await Promise.all(all.map((w) => w.kill()));
    },
  };
}
