/** A node of a test file's own, beside the cluster's, with a namespace for its Pods. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type V1Taint, type V1Toleration } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { PRIVATE_NODE_TAINT, startNode, type LocalNode } from '../cluster/node/index.ts';
import { createNamespace, deleteNamespace } from '../cluster/node/testing.ts';
import { joinRealNode, realNodesDirOf } from '../cluster/realnode/join.ts';
import { asLocalNode } from '../cluster/realnode/localNode.ts';

/** What a Pod the scheduler places (by a nodeSelector) on a test file's own node tolerates. */
export const privateNodeToleration: V1Toleration = {
  key: PRIVATE_NODE_TAINT.key,
  operator: 'Exists',
  effect: PRIVATE_NODE_TAINT.effect,
};

/** Starts (or, after a stop, starts again) the process node named `name` keeping its state in `dir`; tainted, so only Pods bound to it by nodeName run there. */
export const startTestNode = (dir: string, name: string): Promise<LocalNode> =>
  startNode({
    dir,
    kubeconfigPath: inject('kubeconfig'),
    hostsFile: join(dir, 'hosts'),
    name,
    taints: [PRIVATE_NODE_TAINT],
  });

/** Whether the cluster's nodes are real ones (test/cluster/realnode). */
export const clusterHasRealNodes = (): boolean => realNodesDirOf(inject('kubeconfig')) !== undefined;

/** A node of the test's own, of the kind the cluster runs. */
export interface OwnNodeOptions {
  /** Its state (its disk: a node started again with the same dir is the same machine). */
  readonly dir: string;
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly V1Taint[];
  /** The hosts file a process node gives its Pods (real nodes use the cluster's DNS); default `<dir>/hosts`. */
  readonly hostsFile?: string;
}

/**
 * Starts (or, after its stop(), starts again) a node of the test's own, like the cluster's: a real
 * node (kubelet, containerd) joined to the cluster when the cluster runs real nodes, else a
 * process node. Its stop() is a machine that dies.
 */
export async function startOwnNode(o: OwnNodeOptions): Promise<LocalNode> {
  const nodesDir = realNodesDirOf(inject('kubeconfig'));
  if (nodesDir) {
    const { dir, name, labels, taints } = o;
    return asLocalNode(await joinRealNode({ nodesDir, dir, name, labels, taints }));
  }
  const hostsFile = o.hostsFile ?? join(o.dir, 'hosts');
  return startNode({ ...o, kubeconfigPath: inject('kubeconfig'), hostsFile });
}

/** A node of the test's own like the cluster's, tainted so only Pods bound to it by nodeName run there. */
export const startPrivateNode = (dir: string, name: string): Promise<LocalNode> =>
  startOwnNode({ dir, name, taints: [PRIVATE_NODE_TAINT] });

/** A fresh dir (with a hosts file), an API client, the namespace, and the node started by `start` (default startTestNode). */
export async function setUpNode(
  namespace: string,
  name: string,
  dirPrefix: string,
  start: (dir: string, name: string) => Promise<LocalNode> = startTestNode,
): Promise<{ dir: string; core: CoreV1Api; node: LocalNode }> {
  const dir = mkdtempSync(join(os.tmpdir(), dirPrefix));
  writeFileSync(join(dir, 'hosts'), '127.0.0.1 localhost\n');
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  const core = kc.makeApiClient(CoreV1Api);
  await createNamespace(core, namespace);
  return { dir, core, node: await start(dir, name) };
}

/** Undoes setUpNode, whatever part of it happened: Pods go first, then the node, its Node object and dir. */
export async function tearDownNode(
  t: { dir?: string; core?: CoreV1Api; node?: LocalNode },
  namespace: string,
  name: string,
): Promise<void> {
  if (t.core) await deleteNamespace(t.core, namespace);
  await t.node?.stop();
  await t.core?.deleteNode({ name }).catch(() => undefined);
  if (t.dir) rmSync(t.dir, { recursive: true, force: true });
}
