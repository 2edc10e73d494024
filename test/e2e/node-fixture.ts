/** A node of a test file's own, beside the cluster's, with a namespace for its Pods. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1Taint } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { joinRealNode, realNodesDirOf } from '../../localcluster/realnode/join.ts';
import { asLocalNode } from '../../localcluster/realnode/localNode.ts';
import type { LocalNode } from '../../localcluster/types.ts';
import { createNamespace, deleteNamespace } from './pods.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

/** The taint of a test file's own node: only Pods bound to it by nodeName, or tolerating it, run there. */
export const PRIVATE_NODE_TAINT: V1Taint = { key: 'etcd-operator.test/private', effect: 'NoSchedule' };

/** A node of the test's own, like the cluster's. */
export interface OwnNodeOptions {
  /** Its state (its disk: a node started again with the same dir is the same machine). */
  readonly dir: string;
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly V1Taint[];
}

/**
 * Starts (or, after its stop(), starts again) a node of the test's own, like the cluster's: a real
 * node (kubelet, containerd) joined to the cluster. Its stop() is a machine that dies.
 */
export async function startOwnNode(o: OwnNodeOptions): Promise<LocalNode> {
  const nodesDir = realNodesDirOf(inject('kubeconfig'));
  if (!nodesDir) throw new Error(`the cluster of ${inject('kubeconfig')} runs no nodes a test can join`);
  const { dir, name, labels, taints } = o;
  return asLocalNode(await joinRealNode({ nodesDir, dir, name, labels, taints }));
}

/** A node of the test's own like the cluster's, tainted so only Pods bound to it by nodeName run there. */
export const startPrivateNode = (dir: string, name: string): Promise<LocalNode> =>
  startOwnNode({ dir, name, taints: [PRIVATE_NODE_TAINT] });

/** A fresh dir, an API client, the namespace, and a private node (startPrivateNode). */
export async function setUpNode(
  namespace: string,
  name: string,
  dirPrefix: string,
): Promise<{ dir: string; core: CoreV1Api; node: LocalNode }> {
  const dir = mkdtempSync(join(os.tmpdir(), dirPrefix));
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  const core = kc.makeApiClient(CoreV1Api);
  await createNamespace(core, namespace);
  return { dir, core, node: await startPrivateNode(dir, name) };
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
