/** The Node object: registration, status with a Ready condition, and the Lease heartbeat. */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import {
  CoordinationV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type CoreV1Api,
  type KubeConfig,
  type V1Node,
  type V1NodeStatus,
  type V1Taint,
} from '@kubernetes/client-node';
import type { Log } from '../types.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
// A kubelet renews every 10 s a Lease of 40 s; here every 3 s (12 s), as the controller
// manager's grace period is 12 s, so a node that stops is NotReady within seconds.
const leaseSeconds = 12;
const renewMs = 3_000;
/** The kubelet reports status every 5 minutes when nothing changes; this node every minute. */
const statusMs = 60_000;

function nodeStatus(name: string, hostIP: string, since: Date, kubeletPort = 0): V1NodeStatus {
  const now = new Date();
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: since,
  });
  const capacity = {
    cpu: String(os.availableParallelism()),
    memory: `${Math.floor(os.totalmem() / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
  };
  const bootID = (() => {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      return 'unknown';
    }
  })();
  return {
    capacity,
    allocatable: capacity,
    // No Hostname address: the API server would dial the node by it first (kubectl logs), and
    // nothing resolves the node's name.
    addresses: [{ type: 'InternalIP', address: hostIP }],
    conditions: [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'local node has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'local node has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'local node has sufficient PID available'),
      cond('Ready', 'True', 'KubeletReady', 'local process node is posting ready status'),
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } },
    nodeInfo: {
      machineID: name,
      systemUUID: name,
      bootID,
      kernelVersion: os.release(),
      osImage: 'etcd-operator local process node',
      containerRuntimeVersion: 'process://local',
      kubeletVersion: 'v1.34.4',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    },
  };
}

/**
 * The taint of a node a test file starts for its own Pods (bound to it by nodeName): the
 * scheduler puts no other file's Pods there, which would be lost when the file stops its node.
 */
export const PRIVATE_NODE_TAINT: V1Taint = { key: 'etcd-operator.test/private', effect: 'NoSchedule' };

/**
 * Registers (or takes back) the Node with extraLabels (a zone) and taints, then keeps its Lease
 * and status fresh until stopped.
 */
export async function registerNode(
  kc: KubeConfig,
  core: CoreV1Api,
  name: string,
  hostIP: string,
  kubeletPort: number,
  log: Log,
  extraLabels: Readonly<Record<string, string>> = {},
  taints: readonly V1Taint[] = [],
): Promise<() => void> {
  const labels = {
    ...extraLabels,
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': nodeStatus(name, hostIP, new Date()).nodeInfo!.architecture,
  };
  const spec = { taints: [...taints] };
  const node: V1Node = { metadata: { name, labels }, spec };
  await core.createNode({ body: node }).catch(async (err: unknown) => {
    if ((err as { code?: number }).code !== 409) throw err;
    // Taken back: its labels and taints are this start's (a kubelet's --register-with-taints too).
    await core.patchNode({ name, body: { metadata: { labels }, spec } }, mergePatch);
  });
  const since = new Date();
  const writeStatus = () =>
    core.patchNodeStatus({ name, body: { status: nodeStatus(name, hostIP, since, kubeletPort) } }, mergePatch);
  await writeStatus();
  const coord = kc.makeApiClient(CoordinationV1Api);
  const renew = async (): Promise<void> => {
    const spec = { holderIdentity: name, leaseDurationSeconds: leaseSeconds, renewTime: new V1MicroTime() };
    try {
      await coord.patchNamespacedLease({ name, namespace: 'kube-node-lease', body: { spec } }, mergePatch);
    } catch (err) {
      if ((err as { code?: number }).code !== 404) throw err;
      const uid = (await core.readNode({ name })).metadata?.uid;
      const owner = { apiVersion: 'v1', kind: 'Node', name, uid: uid! };
      await coord.createNamespacedLease({
        namespace: 'kube-node-lease',
        body: { metadata: { name, ownerReferences: [owner] }, spec },
      });
    }
  };
  await renew();
  const fail = (what: string) => (err: unknown) => log(`node ${name}: ${what} failed: ${(err as Error).message}`);
  const leaseTimer = setInterval(() => void renew().catch(fail('lease renewal')), renewMs);
  const statusTimer = setInterval(() => void writeStatus().catch(fail('status update')), statusMs);
  return () => {
    clearInterval(leaseTimer);
    clearInterval(statusTimer);
  };
}
