/**
 * The local cluster a whole-cluster run (the crash sweep, the seeded fault run) works on: the
 * one LOCALCLUSTER_KUBECONFIG names, or a new one in a temp dir, with its nodes, which the run
 * may stop as machines die and start again (NodeControl: only on a cluster it started).
 */
import { appendFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { kubectlFor, kubectlPath } from '../../localcluster/controlplane/index.ts';
import { installCrds } from '../../localcluster/crds.ts';
import { startLocalCluster } from '../../localcluster/index.ts';
import type { LocalNode } from '../../localcluster/types.ts';
import { clientsOf, until } from '../effects/kubernetes/e2e-context.ts';
import type { NodeControl } from './scenarios.ts';

/** A cluster with the CRDs installed, its nodes' control, and how to stop what was started. */
export interface RunCluster {
  readonly kubeconfig: string;
  readonly nodes?: NodeControl;
  /** Stops the cluster this started (and removes its dir unless LOCALCLUSTER_KEEP=1); nothing for a given one. */
  stop(): Promise<void>;
}

/** Uses the cluster LOCALCLUSTER_KUBECONFIG names, or starts one in a temp dir named from `prefix`. */
export async function runCluster(prefix: string): Promise<RunCluster> {
  const given = process.env.LOCALCLUSTER_KUBECONFIG;
  if (given) {
    await installCrds(kubectlFor(given, await kubectlPath()));
    return { kubeconfig: given, stop: () => Promise.resolve() };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const logFile = path.join(dir, 'cluster.log');
  const cluster = await startLocalCluster({ dir, node: true, log: (line) => appendFileSync(logFile, line + '\n') });
  await installCrds(cluster.kubectl);
  /** The cluster's nodes by name, a stopped one started again in its place (the cluster stops it). */
  const running = new Map<string, LocalNode>((cluster.nodes ?? []).map((n) => [n.name, n]));
  const startNode = cluster.startNode?.bind(cluster);
  const nodes: NodeControl | undefined = startNode && {
    async stop(name) {
      await running.get(name)?.stop();
      running.delete(name);
    },
    async start(name) {
      if (running.has(name)) return;
      running.set(name, await startNode(name));
      const { core } = clientsOf(cluster.kubeconfigPath);
      await until(`node ${name} Ready again`, async () =>
        (await core.readNode({ name })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined,
      );
    },
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await cluster.stop().catch((err: unknown) => console.error(`stopping the local cluster: ${String(err)}`));
      if (process.env.LOCALCLUSTER_KEEP !== '1') await rm(dir, { recursive: true, force: true });
    })());
  // Ctrl-C or a SIGTERM (a CI job cancelled) ends the run, not the machine's state: the cluster's
  // nodes (network namespaces, links, mounts, Pod processes) and the registry go with it, as at the
  // run's own end. The managers the run started die with it (localcluster/manager-process.ts).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`${signal}: stopping the local cluster before exiting`);
      void stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  return { kubeconfig: cluster.kubeconfigPath, ...(nodes ? { nodes } : {}), stop };
}
