/**
 * The process node of the local cluster: registers a Node, binds unscheduled Pods to itself
 * and runs them as local processes, each Pod with its own loopback address and each container
 * in its own mount namespace. See docs/local-node.md.
 */
import type { NodeAgent, NodeOptions } from '../types.ts';

/** Starts the node agent; resolves once the Node is registered and Pods are being watched. */
export async function startNode(opts: NodeOptions): Promise<NodeAgent> {
  throw new Error(`startNode(${opts.name ?? 'local-node'}): not implemented yet`);
}
