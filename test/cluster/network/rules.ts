/**
 * The nftables ruleset that cuts isolated Pods off: pure text, loaded atomically with
 * `nft -f`. Every Pod packet is locally generated, so one output chain sees both directions.
 */

/** A TCP connection end pair to drop, as the packet carries it. */
export interface Tuple {
  readonly srcIP: string;
  readonly srcPort: number;
  readonly dstIP: string;
  readonly dstPort: number;
}

/** What the ruleset is made from. */
export interface RulesInput {
  readonly table: string;
  readonly isolated: readonly string[];
  /**
   * Cgroup v2 paths (as nft names them, relative to /sys/fs/cgroup) of all Pods and of each
   * Pod by address: they catch connections a Pod makes without binding its own address.
   */
  readonly cgroups?: { readonly root: string; readonly depth: number; readonly pod: (ip: string) => string };
  /** Addresses an isolated Pod still reaches and is reached from: the host, the API server. */
  readonly host: readonly string[];
  /** Established connections between an isolated Pod and another, cut mid-stream. */
  readonly cut: readonly Tuple[];
}

/** The `nft -f` script that replaces the whole table in one transaction. */
export function renderRules(input: RulesInput): string {
  const t = input.table;
  const host = `{ ${[...new Set(input.host)].join(', ')} }`;
  const lines = [`table inet ${t} {}`, `delete table inet ${t}`, `table inet ${t} {`];
  lines.push('  set cut {', '    type ipv4_addr . inet_service . ipv4_addr . inet_service');
  if (input.cut.length > 0) {
    const elements = input.cut.map((c) => `${c.srcIP} . ${c.srcPort} . ${c.dstIP} . ${c.dstPort}`);
    lines.push(`    elements = { ${elements.join(', ')} }`);
  }
  lines.push('  }', '  chain output {', '    type filter hook output priority filter; policy accept;');
  lines.push('    ip saddr . tcp sport . ip daddr . tcp dport @cut drop');
  for (const ip of input.isolated) {
    lines.push(`    ip saddr ${ip} ip daddr ${ip} accept`);
    const cg = input.cgroups;
    if (cg) {
      const own = `socket cgroupv2 level ${cg.depth + 1} ${JSON.stringify(cg.pod(ip))}`;
      lines.push(`    ${own} ip daddr ${ip} accept`);
      lines.push(`    ${own} ip daddr != ${host} drop`);
    }
    lines.push(`    ip saddr ${ip} ip daddr != ${host} drop`);
    lines.push(`    ip daddr ${ip} ip saddr != ${host} drop`);
    if (cg) lines.push(`    ip daddr ${ip} socket cgroupv2 level ${cg.depth} ${JSON.stringify(cg.root)} drop`);
  }
  lines.push('  }', '}');
  return lines.join('\n') + '\n';
}

/** The script that removes the table (and does nothing when there is none). */
export function removeRules(table: string): string {
  return `table inet ${table} {}\ndelete table inet ${table}\n`;
}
