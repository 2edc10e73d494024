/**
 * A node that hangs, as a machine whose kubelet died but whose Lease is still renewed (by the
 * test): it stays Ready, so the scheduler binds Pods to it, and none of them ever starts. Tests
 * use it to put a member where it cannot start, then lose the node for good.
 */
import {
  CoordinationV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type CoreV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';

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
