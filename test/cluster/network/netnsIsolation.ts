/**
 * isolate()/heal() when every Pod has its own network namespace: Pod-to-Pod traffic crosses the
 * bridge (bridged, or routed back into it after a Service's DNAT), host traffic does not. So a
 * drop of every forwarded packet from or to the isolated address, in the bridge's forward hook
 * and the IP forward hook, cuts it off its peers (open connections too) and keeps the host: the
 * API server, the node's probes and exec, a manager on the host.
 */
import { createHash } from 'node:crypto';
import type { Log } from '../types.ts';
import { Serial } from './informer.ts';
import { ensureNft, nft } from './nft.ts';
import { TABLE_PREFIX } from './podNetwork.ts';

/** The `nft -f` script that replaces both tables of an isolation with these addresses cut off. */
export function renderIsolation(table: string, isolated: readonly string[]): string {
  const lines: string[] = [];
  for (const family of ['bridge', 'inet']) {
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
  }

  async #sync(): Promise<void> {
    const script = renderIsolation(this.#table, [...this.#isolated].sort());
    if (script === this.#applied) return;
    await nft(script);
    this.#applied = this.#isolated.size > 0 ? script : '';
  }
}
