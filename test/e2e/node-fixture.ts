/** A process node of a test file's own, beside the cluster's, with a namespace for its Pods. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type V1Toleration } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { PRIVATE_NODE_TAINT, startNode, type LocalNode } from '../cluster/node/index.ts';
import { createNamespace, deleteNamespace } from '../cluster/node/testing.ts';

/** What a Pod the scheduler places (by a nodeSelector) on a test file's own node tolerates. */
export const privateNodeToleration: V1Toleration = {
  key: PRIVATE_NODE_TAINT.key,
  operator: 'Exists',
  effect: PRIVATE_NODE_TAINT.effect,
};

/** Starts (or, after a stop, starts again) the node named `name` keeping its state in `dir`; tainted, so only Pods bound to it by nodeName run there. */
export const startTestNode = (dir: string, name: string): Promise<LocalNode> =>
  startNode({
    dir,
    kubeconfigPath: inject('kubeconfig'),
    hostsFile: join(dir, 'hosts'),
    name,
    taints: [PRIVATE_NODE_TAINT],
  });

/** A fresh dir (with a hosts file), an API client, the namespace, and the node started. */
export async function setUpNode(
  namespace: string,
  name: string,
  dirPrefix: string,
): Promise<{ dir: string; core: CoreV1Api; node: LocalNode }> {
  const dir = mkdtempSync(join(os.tmpdir(), dirPrefix));
  writeFileSync(join(dir, 'hosts'), '127.0.0.1 localhost\n');
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  const core = kc.makeApiClient(CoreV1Api);
  await createNamespace(core, namespace);
  return { dir, core, node: await startTestNode(dir, name) };
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
