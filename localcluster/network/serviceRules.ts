/**
 * Services as kube-proxy's nftables mode makes them: a DNAT per ClusterIP and port to one of
 * its endpoints in turn, for packets from Pods (prerouting, as the nodes route them through the
 * machine) and from the host (output). Pure text, loaded atomically with `nft -f`. A port with no
 * endpoint gets no rule: the refusal table (refusal.ts) refuses it.
 */
import { createHash } from 'node:crypto';
import { nft } from './nft.ts';
import { TABLE_PREFIX } from './podNetwork.ts';
import type { Route } from './routes.ts';

/** The `nft -f` script that replaces the table with these routes. */
export function renderServiceRules(table: string, routes: readonly Route[]): string {
  const lines = [`table ip ${table} {}`, `delete table ip ${table}`, `table ip ${table} {`, '  chain services {'];
  for (const r of routes) {
    const match = `ip daddr ${r.ip} tcp dport ${r.port}`;
    if (r.targets.length === 1) lines.push(`    ${match} dnat to ${r.targets[0]!.ip}:${r.targets[0]!.port}`);
    if (r.targets.length > 1) {
      const map = r.targets.map((t, i) => `${i} : ${t.ip} . ${t.port}`).join(', ');
      lines.push(`    ${match} dnat ip to numgen inc mod ${r.targets.length} map { ${map} }`);
    }
  }
  lines.push('  }');
  for (const [chain, hook] of [
    ['prerouting', 'prerouting'],
    ['output', 'output'],
  ]) {
    lines.push(
      `  chain ${chain} {`,
      `    type nat hook ${hook} priority -100; policy accept;`,
      '    jump services',
      '  }',
    );
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** The script that removes the table (and does nothing when there is none). */
export function removeServiceRules(table: string): string {
  return `table ip ${table} {}\ndelete table ip ${table}\n`;
}

/** Services as nftables DNAT rules, in a table named after the network's directory. */
export class ServiceRules {
  readonly #table: string;
  #applied = '';
  #served: string[] = [];

  /** Names the table after the network's directory. */
  constructor(dir: string) {
    this.#table = `${TABLE_PREFIX}svc_${createHash('sha256').update(dir).digest('hex').slice(0, 10)}`;
  }

  /** Replaces the rules with these routes (nothing is loaded when they did not change). */
  async apply(routes: readonly Route[]): Promise<void> {
    const script = renderServiceRules(this.#table, routes);
    if (script !== this.#applied) await nft(script);
    this.#applied = script;
    this.#served = routes.filter((r) => r.targets.length > 0).map((r) => `${r.ip}:${r.port}`);
  }

  /** `ip:port` of every Service port that has an endpoint. */
  addresses(): string[] {
    return [...this.#served];
  }

  /** Removes the table. */
  async close(): Promise<void> {
    if (this.#applied) await nft(removeServiceRules(this.#table));
    this.#applied = '';
  }
}
