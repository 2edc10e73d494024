/**
 * What a CNI plugin does for a Pod here: its own network namespace with loopback and an eth0
 * (a veth whose host end is a port of the bridge) holding the Pod's address, and a route to
 * the Service range through the gateway. No default route: nothing leaves the machine.
 */
import { createHash } from 'node:crypto';
import type { Log } from '../types.ts';
import { ensureBridge } from './bridge.ts';
import { ipBatch, netnsNames } from './ip.ts';
import { BRIDGE, GATEWAY, NAME_PREFIX, SERVICE_CIDR, VETH_PREFIX } from './podNetwork.ts';

const hash = (s: string, n: number): string => createHash('sha256').update(s).digest('hex').slice(0, n);

/** The host end of a Pod's veth (interface names have at most 15 characters). */
export function vethName(uid: string): string {
  return `${VETH_PREFIX}${hash(uid, 10)}`;
}

/** The network namespaces of one node's Pods, named `eo-<node hash>-<pod uid>`. */
export class PodNetns {
  readonly #prefix: string;
  readonly #log: Log;
  #bridge: Promise<void> | undefined;

  constructor(nodeName: string, log: Log) {
    this.#prefix = `${NAME_PREFIX}${hash(nodeName, 8)}-`;
    this.#log = log;
  }

  /** The `ip netns` name of a Pod's namespace. */
  name(uid: string): string {
    return `${this.#prefix}${uid}`;
  }

  /** Makes the Pod's namespace with `ip` as its address; returns the namespace's path. */
  async attach(uid: string, ip: string): Promise<string> {
    this.#bridge ??= ensureBridge(this.#log).catch((err: unknown) => {
      this.#bridge = undefined;
      throw err;
    });
    await this.#bridge;
    await this.detach(uid); // what a killed run of this Pod left
    const ns = this.name(uid);
    const veth = vethName(uid);
    await ipBatch([
      `netns add ${ns}`,
      `link add ${veth} type veth peer name eth0 netns ${ns}`,
      `link set ${veth} master ${BRIDGE}`,
      // A Pod reaching itself through a Service: the packet goes back out the port it came in.
      `link set ${veth} type bridge_slave hairpin on`,
      `link set ${veth} up`,
    ]);
    await ipBatch(
      [
        `addr add ${ip}/16 dev eth0`,
        'link set lo up',
        'link set eth0 up',
        `route add ${SERVICE_CIDR} via ${GATEWAY} dev eth0`,
      ],
      ns,
    );
    return `/run/netns/${ns}`;
  }

  /** Removes the Pod's namespace and veth (nothing when there are none). */
  async detach(uid: string): Promise<void> {
    await ipBatch([`link del ${vethName(uid)}`, `netns del ${this.name(uid)}`], undefined, true);
  }

  /** Removes the namespaces of this node's Pods that a killed run left behind. */
  async removeLeftovers(): Promise<void> {
    const mine = (await netnsNames()).filter((n) => n.startsWith(this.#prefix));
    for (const ns of mine) await this.detach(ns.slice(this.#prefix.length));
    if (mine.length > 0) this.#log(`removed ${mine.length} Pod network namespaces left by an earlier run`);
  }
}
