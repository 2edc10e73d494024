/**
 * isolate()/heal(): cut a Pod address off every other Pod with nftables. The host side
 * (127.0.0.1: API server, node agent and its probes, a manager run on the host) still
 * reaches the Pod and is reached by it, like a Pod partitioned from its peers but not from
 * its own kubelet; Services do not lead around the cut (the proxy skips isolated Pods).
 */
import { createHash } from 'node:crypto';
import { readlink } from 'node:fs/promises';
import type { Log } from '../types.ts';
import { PodCgroups, PREFIX } from './cgroups.ts';
import { Serial } from './informer.ts';
import { ensureNft, nft } from './nft.ts';
import { crossingConnections, podOfProcess, processes, tcpSockets } from './procs.ts';
import { removeRules, renderRules } from './rules.ts';

/** How often the rules are brought up to date while a Pod is isolated (new processes, connections). */
const RESCAN_MS = 500;

/** The isolation rules of one local network. */
export class Isolation {
  readonly #table: string;
  readonly #cgroups: PodCgroups | undefined;
  readonly #log: Log;
  readonly #serial: Serial;
  readonly #isolated = new Set<string>();
  #pods = new Set<string>();
  #host: readonly string[] = ['127.0.0.1'];
  #applied = '';
  #timer: NodeJS.Timeout | undefined;

  private constructor(table: string, cgroups: PodCgroups | undefined, log: Log) {
    this.#table = table;
    this.#cgroups = cgroups;
    this.#log = log;
    this.#serial = new Serial(() => this.#sync(), log);
  }

  /** Names the table and cgroups after the network's directory and removes leftovers of a crash. */
  static async start(dir: string, log: Log): Promise<Isolation> {
    const id = createHash('sha256').update(dir).digest('hex').slice(0, 10);
    const cgroups = await PodCgroups.open(`${PREFIX}${id}`);
    if (!cgroups) log('no cgroup v2 tree: isolate() cannot catch Pod connections made from 127.0.0.1');
    const isolation = new Isolation(`etcd_operator_net_${id}`, cgroups, log);
    await nft(removeRules(isolation.#table)).catch(() => undefined);
    return isolation;
  }

  /** Whether this address is cut off now. */
  isIsolated(ip: string): boolean {
    return this.#isolated.has(ip);
  }

  /** The current Pod addresses, and the host addresses an isolated Pod keeps. */
  async update(pods: readonly string[], host: readonly string[]): Promise<void> {
    this.#pods = new Set(pods);
    this.#host = ['127.0.0.1', ...host];
    if (this.#isolated.size > 0) await this.#serial.kick();
  }

  /**
   * The cgroup directory a container of the Pod at this address should start in (writing its
   * pid to cgroup.procs before exec): then isolate() holds from its first packet, with no
   * rescan needed. Undefined without a cgroup v2 tree.
   */
  async cgroupFor(ip: string): Promise<string | undefined> {
    return this.#cgroups?.ensure(ip);
  }

  /** Cuts every packet between this address and other Pods; resolves once the rules are loaded. */
  async isolate(ip: string): Promise<void> {
    await ensureNft(this.#log);
    this.#isolated.add(ip);
    await this.#cgroups?.ensure(ip);
    this.#timer ??= setInterval(() => void this.#serial.kick(), RESCAN_MS).unref();
    await this.#serial.kick();
    this.#log(`isolated ${ip}`);
  }

  /** Undoes isolate(ip); connections cut mid-stream may resume, as after a real partition heals. */
  async heal(ip: string): Promise<void> {
    this.#isolated.delete(ip);
    if (this.#isolated.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    await this.#serial.kick();
    this.#log(`healed ${ip}`);
  }

  /** Removes the rules and gives the Pods' processes back their cgroups. */
  async stop(): Promise<void> {
    this.#isolated.clear();
    if (this.#timer) clearInterval(this.#timer);
    await this.#serial.close();
    if (this.#applied) await nft(removeRules(this.#table));
    this.#applied = '';
    await this.#cgroups?.close();
  }

  async #sync(): Promise<void> {
    if (this.#isolated.size === 0) {
      if (this.#applied) await nft(removeRules(this.#table));
      this.#applied = '';
      return;
    }
    const [procs, sockets, hostNs] = await Promise.all([processes(), tcpSockets(), readlink('/proc/self/ns/mnt')]);
    const pods = new Set([...this.#pods, ...this.#isolated]);
    const podOf = podOfProcess(procs, sockets, pods, hostNs);
    const cg = this.#cgroups;
    if (cg) for (const [pid, ip] of podOf) await cg.adopt(pid, ip);
    const script = renderRules({
      table: this.#table,
      isolated: [...this.#isolated].sort(),
      cgroups: cg && { root: cg.nftRoot, depth: cg.depth, pod: (ip) => cg.nftPod(ip) },
      host: this.#host,
      cut: crossingConnections(sockets, procs, podOf, pods, this.#isolated),
    });
    if (script === this.#applied) return;
    await nft(script);
    this.#applied = script;
  }
}
