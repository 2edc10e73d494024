/**
 * The shape of the Pod network on this machine: one Linux bridge with the gateway address,
 * each Pod in its own network namespace behind a veth, Services as nftables DNAT. Nothing here
 * is routed off the machine.
 */

/** The bridge every Pod's veth is a port of (at most 15 characters, as the kernel wants). */
export const BRIDGE = 'eo-pods0';
/** The host's address on the bridge: Pods reach the host (and so the API server) there. */
export const GATEWAY = '10.244.0.1';
/** Pod addresses; nodes hand them out, each from its own /24. */
export const POD_CIDR = '10.244.0.0/16';
/** Where ClusterIPs come from; Pods route it to the gateway, where it is DNATed. */
export const SERVICE_CIDR = '10.96.0.0/16';
/** Prefix of every Pod network namespace (`ip netns`) the nodes make. */
export const NAME_PREFIX = 'eo-';
/** Prefix of the host end of every Pod's veth. */
export const VETH_PREFIX = 'eov';
/** Prefix of every nftables table of the local network. */
export const TABLE_PREFIX = 'etcd_operator_';

/** Whether an IPv4 address is one a node hands to Pods. */
export function isPodAddress(ip: string): boolean {
  return ip.startsWith('10.244.') && ip !== GATEWAY;
}
