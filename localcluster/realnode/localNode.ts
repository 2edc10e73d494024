/**
 * A real node as a LocalNode (types.ts: what tests and the crash sweep call): kill a
 * container, read its logs, exec in it, stop the node. Each goes through the node's containerd
 * (crictl), found by the labels the kubelet puts on every container.
 */
import type { ExecResult, LocalNode } from '../types.ts';
import type { RealNode } from './node.ts';

/** crictl's container id of a Pod's container (the first one when none is named), or throws. */
async function containerId(node: RealNode, namespace: string, pod: string, container?: string): Promise<string> {
  const args = [
    'ps',
    '-q',
    '--label',
    `io.kubernetes.pod.namespace=${namespace}`,
    '--label',
    `io.kubernetes.pod.name=${pod}`,
  ];
  if (container) args.push('--name', `^${container}$`);
  const ids = (await node.crictl(args)).split('\n').filter(Boolean);
  if (!ids[0])
    throw new Error(`${node.name}: no running container of ${namespace}/${pod}${container ? `/${container}` : ''}`);
  return ids[0];
}

/** The LocalNode contract over a real node. */
export function asLocalNode(node: RealNode): LocalNode {
  return {
    name: node.name,
    async killContainer(namespace, pod, container) {
      const id = await containerId(node, namespace, pod, container);
      const info = JSON.parse(await node.crictl(['inspect', id])) as { info?: { pid?: number } };
      const pid = info.info?.pid;
      if (!pid) throw new Error(`${node.name}: container ${id} has no pid`);
      // The node shares the machine's pid namespace: the container's init is this pid here too.
      process.kill(pid, 'SIGKILL');
    },
    async logs(namespace, pod, container) {
      return node.crictl(['logs', await containerId(node, namespace, pod, container)]);
    },
    async exec(namespace, pod, argv, container): Promise<ExecResult> {
      const id = await containerId(node, namespace, pod, container);
      try {
        return { stdout: await node.crictl(['exec', id, ...argv]), stderr: '', code: 0 };
      } catch (err) {
        return { stdout: '', stderr: (err as Error).message, code: 1 };
      }
    },
    stop: () => node.stop(),
  };
}
