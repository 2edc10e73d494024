/**
 * isolate()/heal() when every Pod has its own network namespace: Pod-to-Pod traffic crosses the
 * bridge (bridged, or routed back into it after a Service's DNAT), host traffic does not. So a
 * drop of every forwarded packet from or to the isolated address, in the bridge's forward hook
 * and the IP forward hook, cuts it off its peers (open connections too) and keeps the host: the
 * API server, the node's probes and exec, a manager on the host.
 *
 * Real nodes (localcluster/realnode): the machine routes between nodes, so its forward hook cuts
 * a Pod off the Pods of other nodes and off every Service (DNATed on the machine). Pods of one
 * node meet on that node's own bridge, inside its network namespace, which the machine never
 * sees: there a bridge table drops them too. The node's own traffic to its Pods (probes, the
 * machine's, routed through the node) is not bridged, so the host stays connected as above.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { NODE_NETNS_PREFIX } from '../realnode/routes.ts';
import type { Log } from '../types.ts';
import { Serial } from './informer.ts';
import { ensureNft, nft } from './nft.ts';
import { TABLE_PREFIX } from './podNetwork.ts';

/**
 * The `nft -f` script that replaces the tables of an isolation with these addresses cut off: a
 * bridge and an inet table on the machine, a bridge table in a real node's namespace.
 */
export function renderIsolation(
  table: string,
  isolated: readonly string[],
  families: readonly ('bridge' | 'inet')[] = ['bridge', 'inet'],
): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`table ${family} ${table} {}`, `delete table ${family} ${table}`);
    if (isolated.length === 0) continue;
    lines.push(
      `table ${family} ${table} {`,
      '  set isolated {',
      '    type ipv4_addr',
      `    elements = { ${isolated.join(', ')} }`,
      '  }',
      '  chain forward {',
      '    type filter hook forward priority 0; policy accept;',
      '    ip saddr @isolated drop',
      '    ip daddr @isolated drop',
      '  }',
      '}',
    );
  }
  return lines.join('\n') + '\n';
}

/** The isolation rules of one network (or isolator), in tables named after its directory. */
export class NetnsIsolation {
  readonly #table: string;
  readonly #log: Log;
  readonly #serial: Serial;
  readonly #isolated = new Set<string>();
  #applied = '';
  /** The real nodes' namespaces holding rules of this isolation. */
  readonly #nodes = new Set<string>();

  private constructor(table: string, log: Log) {
    this.#table = table;
    this.#log = log;
    this.#serial = new Serial(() => this.#sync(), log);
  }

  /** Names the tables after the directory and removes what a killed run left in them. */
  static async start(dir: string, log: Log): Promise<NetnsIsolation> {
    const id = createHash('sha256').update(dir).digest('hex').slice(0, 10);
    const isolation = new NetnsIsolation(`${TABLE_PREFIX}iso_${id}`, log);
    await nft(renderIsolation(isolation.#table, [])).catch(() => undefined);
    for (const ns of await realNodeNamespaces()) {
      await nft(renderIsolation(isolation.#table, [], ['bridge']), ns).catch(() => undefined);
    }
    return isolation;
  }

  /** Cuts every packet between this address and other Pods; resolves once the rules are loaded. */
  async isolate(ip: string): Promise<void> {
    await ensureNft(this.#log);
    this.#isolated.add(ip);
    await this.#serial.kick();
    this.#log(`isolated ${ip}`);
  }

  /** Undoes isolate(ip); connections cut mid-stream may resume, as after a real partition heals. */
  async heal(ip: string): Promise<void> {
    this.#isolated.delete(ip);
    await this.#serial.kick();
    this.#log(`healed ${ip}`);
  }

  /** Removes the rules. */
  async stop(): Promise<void> {
    this.#isolated.clear();
    await this.#serial.close();
    if (this.#applied) await nft(renderIsolation(this.#table, []));
    this.#applied = '';
    for (const ns of this.#nodes) await nft(renderIsolation(this.#table, [], ['bridge']), ns).catch(() => undefined);
    this.#nodes.clear();
  }

  async #sync(): Promise<void> {
    const isolated = [...this.#isolated].sort();
    const script = renderIsolation(this.#table, isolated);
    if (script !== this.#applied) {
      await nft(script);
      this.#applied = isolated.length > 0 ? script : '';
    }
    // Every time, not only on a change: a node started meanwhile has a namespace without them.
    const onNode = renderIsolation(this.#table, isolated, ['bridge']);
    for (const ns of await realNodeNamespaces()) {
      if (isolated.length === 0 && !this.#nodes.has(ns)) continue;
      // A node stopping meanwhile takes its namespace, and its Pods, with it.
      await nft(onNode, ns).catch((err: unknown) => {
        if (existsSync(`/run/netns/${ns}`)) throw err;
      });
      if (isolated.length > 0) this.#nodes.add(ns);
      else this.#nodes.delete(ns);
    }
  }
}

/** The network namespaces of the real nodes running on the machine. */
async function realNodeNamespaces(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('ip', ['netns', 'list']).catch(() => ({ stdout: '' }));
  return stdout
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n.startsWith(NODE_NETNS_PREFIX));
}
