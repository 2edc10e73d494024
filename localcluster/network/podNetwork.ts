/**
 * The address ranges of the local network on this machine: the Service range the control plane
 * gives ClusterIPs from, and the prefix of every nftables table of the network part.
 */

/** Where ClusterIPs come from; Services are DNATed on the machine. */
export const SERVICE_CIDR = '10.96.0.0/16';
/** Prefix of every nftables table of the local network. */
export const TABLE_PREFIX = 'etcd_operator_';
