/**
 * A node that hangs, as a machine whose kubelet died but whose Lease is still renewed (by the
 * test): it stays Ready, so the scheduler chooses it for Pods, and none of them ever starts (nor
 * the helper Pod that would make a new volume there). Tests use it to put a member where it cannot
 * start, then lose the node for good.
 */
import {
  CoordinationV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type CoreV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import { pvcName } from '../../effects/kubernetes/meta.ts';
import { SELECTED_NODE } from '../../manager/volume-nodes.ts';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Marks a node (un)schedulable, as kubectl cordon and uncordon do. */
export const cordon = (core: CoreV1Api, name: string, unschedulable: boolean): Promise<unknown> =>
  core.patchNode({ name, body: { spec: { unschedulable } } }, merge);

/**
 * Renews the Lease of a node whose kubelet is stopped, every 2 s, so the node lifecycle
 * controller keeps it Ready; returns what stops the renewals (the node then goes NotReady).
 */
export async function keepLeaseOf(kc: KubeConfig, name: string): Promise<() => void> {
  const coord = kc.makeApiClient(CoordinationV1Api);
  const renew = () =>
    coord
      .patchNamespacedLease(
        { name, namespace: 'kube-node-lease', body: { spec: { renewTime: new V1MicroTime() } } },
        merge,
      )
      .catch(() => undefined);
  await renew();
  const timer = setInterval(() => void renew(), 2000);
  return () => clearInterval(timer);
}

/**
 * The member of cluster `cluster` that `node` holds, if any: its Pod bound there or, while its
 * claim waits for its volume (WaitForFirstConsumer: local-path-provisioner makes it with a helper
 * Pod on the node, and kube-scheduler binds the member's Pod only once it is made), its claim
 * selected for it (`volume.kubernetes.io/selected-node`). On a hung node, neither ever starts.
 */
export async function memberHeldBy(
  core: CoreV1Api,
  namespace: string,
  cluster: string,
  node: string,
): Promise<string | undefined> {
  const ours = (name: string | undefined): name is string => Boolean(name?.startsWith(`${cluster}-`));
  const pods = (await core.listNamespacedPod({ namespace })).items;
  const bound = pods.find((p) => p.spec?.nodeName === node && ours(p.metadata?.name))?.metadata?.name;
  if (bound) return bound;
  const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace })).items;
  const claim = claims.find((c) => c.metadata?.annotations?.[SELECTED_NODE] === node)?.metadata?.name;
  const member = claim?.slice(pvcName('').length);
  return ours(member) && claim === pvcName(member) ? member : undefined;
}
