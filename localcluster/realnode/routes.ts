/**
 * How real nodes reach each other, the machine and its services: the machine is the nodes'
 * router, as a top-of-rack switch is for kind's node containers.
 *
 *   node N's netns (eth0 10.250.N.2)  ── veth eo-rnN (10.250.N.1) ──  machine
 *   Pods of node N: 10.245.N.0/24 on the node's bridge cni0 (gateway 10.245.N.1)
 *
 * - a node routes the cluster's ranges (Pods 10.245.0.0/16, node links 10.250.0.0/16, Services
 *   10.96.0.0/16) to the machine and nothing else: no default route, nothing leaves the machine;
 * - the machine routes each node's Pod range to that node, and forwards what arrives on a node's
 *   veth (forwarding set on those interfaces alone) to another node only;
 * - Services are the network part's nftables DNAT on the machine (localcluster/network), which
 *   already serves the machine's own processes; a Pod's packet to a ClusterIP goes up to the
 *   machine and is DNATed there, then masqueraded (as is the machine's own, which leaves with the
 *   address of the machine's default route) so that the reply comes back through the machine;
 * - two addresses of the Service range's low, never-allocated band stand for the machine's own
 *   services: the cluster DNS (CoreDNS) and the image registry, DNATed to their loopback ports.
 * Pure: the values and the nftables script are unit-tested; cluster.ts and node.ts apply them.
 */

/** Every node's Pod ranges: 10.245.<index>.0/24. */
export const POD_RANGES = '10.245.0.0/16';
/** Every node's link to the machine: 10.250.<index>.0/24. */
export const NODE_LINKS = '10.250.0.0/16';
/** The Service range (the control plane's, localcluster/network/podNetwork.ts). */
export const SERVICE_RANGE = '10.96.0.0/16';
/** The cluster DNS address Pods are given (kind's and kubeadm's kube-dns address). */
export const CLUSTER_DNS = '10.96.0.10';
/** The address nodes pull images from (the local registry, DNATed to the machine's loopback). */
export const REGISTRY_ADDRESS = '10.96.0.11';
export const REGISTRY_PORT = 5000;
/** The machine's nftables table of the real nodes' network. */
export const MACHINE_TABLE = 'eo_rn_machine';
/** The prefix of every node's network namespace (eo-rn-node-a...). */
export const NODE_NETNS_PREFIX = 'eo-rn-';
/** The prefix of every node's veth on the machine (eo-rn1, eo-rn2...). */
export const VETH_PREFIX = 'eo-rn';

/** The addresses of node `index` (1..250). */
export interface NodeAddressing {
  /** The machine's end of the node's veth. */
  readonly machine: string;
  /** The node's address (its InternalIP). */
  readonly node: string;
  readonly podCidr: string;
  readonly veth: string;
}

/** The addresses of node `index`. */
export function addressing(index: number): NodeAddressing {
  if (!Number.isInteger(index) || index < 1 || index > 250) throw new Error(`node index ${index}: 1..250`);
  return {
    machine: `10.250.${index}.1`,
    node: `10.250.${index}.2`,
    podCidr: `10.245.${index}.0/24`,
    veth: `${VETH_PREFIX}${index}`,
  };
}

/** `ip route add` arguments inside node `index`'s netns: the cluster's ranges via the machine. */
export function nodeRoutes(index: number): string[][] {
  const { machine } = addressing(index);
  return [POD_RANGES, NODE_LINKS, SERVICE_RANGE].map((dst) => ['route', 'add', dst, 'via', machine]);
}

/** `ip route add` arguments on the machine: node `index`'s Pod range via the node. */
export function machineRoute(index: number): string[] {
  const a = addressing(index);
  return ['route', 'add', a.podCidr, 'via', a.node, 'dev', a.veth];
}

/** Loopback ports of the machine's services that nodes and Pods reach at fixed addresses. */
export interface MachineServices {
  readonly dnsPort: number;
  readonly registryPort: number;
}

/** The `nft -f` script that (re)makes the machine's table for the real nodes. */
export function machineRules(s: MachineServices): string {
  const nodes = `"${VETH_PREFIX}*"`;
  const t = MACHINE_TABLE;
  return [
    `table ip ${t} {}`,
    `delete table ip ${t}`,
    `table ip ${t} {`,
    '  chain pre {',
    '    type nat hook prerouting priority dstnat - 10; policy accept;',
    `    iifname ${nodes} ip daddr ${CLUSTER_DNS} udp dport 53 dnat to 127.0.0.1:${s.dnsPort}`,
    `    iifname ${nodes} ip daddr ${CLUSTER_DNS} tcp dport 53 dnat to 127.0.0.1:${s.dnsPort}`,
    `    iifname ${nodes} ip daddr ${REGISTRY_ADDRESS} tcp dport ${REGISTRY_PORT} dnat to 127.0.0.1:${s.registryPort}`,
    '  }',
    '  chain forward {',
    '    type filter hook forward priority filter - 10; policy accept;',
    // From a node to anything but another node (or back to itself): not ours to route.
    `    iifname ${nodes} oifname != ${nodes} drop`,
    `    oifname ${nodes} iifname != ${nodes} ct status & dnat == 0 drop`,
    '  }',
    '  chain post {',
    '    type nat hook postrouting priority srcnat; policy accept;',
    // DNATed to a node (a Service): from the machine's address on that node's link, so the reply
    // comes back through the machine, whether the client is a Pod of the same node or the machine.
    `    oifname ${nodes} ct status dnat masquerade`,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** The script that removes the machine's table (nothing when there is none). */
export function removeMachineRules(): string {
  return `table ip ${MACHINE_TABLE} {}\ndelete table ip ${MACHINE_TABLE}\n`;
}
