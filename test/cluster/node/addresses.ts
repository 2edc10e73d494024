/**
 * Pod addresses: one per Pod from 10.244.0.0/16 (on the Pod network's bridge), or from
 * 127.10.0.0/16 in the loopback mode; never one that is in use.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY, podNetworkMode, type PodNetworkMode } from '../network/podNetwork.ts';

const first = 1;
const last = 256 * 256 - 2;

/** The /16 each mode hands addresses out of. */
const prefixes: Readonly<Record<PodNetworkMode, string>> = { netns: '10.244.', loopback: '127.10.' };

/** /proc/net/tcp's spelling of an IPv4 address (little-endian hex). */
function procHex(ip: string): string {
  return ip
    .split('.')
    .map((o) => Number(o).toString(16).padStart(2, '0').toUpperCase())
    .reverse()
    .join('');
}

/**
 * Whether a process of this machine (of any cluster) listens on the address. Only listening
 * sockets count: connections of a killed Pod linger in TIME_WAIT and hold nothing.
 */
export function socketBound(ip: string): boolean {
  const hex = `${procHex(ip)}:`;
  try {
    return readFileSync('/proc/net/tcp', 'utf8')
      .split('\n')
      .some((l) => {
        const f = l.trim().split(/\s+/);
        return f[1]?.startsWith(hex) && f[3] === '0A';
      });
  } catch {
    return false;
  }
}

/** A starting /24 per node name, so two nodes of a cluster do not race for the same addresses. */
function startFor(name: string): number {
  if (name === 'local-node') return first;
  let h = 2166136261;
  for (const c of name) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return ((h >>> 0) % 255) * 256 + 257;
}

/**
 * Hands out addresses round-robin from a counter kept in the node's directory, so an address
 * freed by a deleted Pod is the last to be reused (clients may still hold it). Skipped: the
 * addresses of live Pods of any node (inUse) and any address a socket is bound to.
 */
export class AddressPool {
  readonly #file: string;
  readonly #inUse: (ip: string, uid: string) => boolean;
  readonly #live = new Map<string, string>();
  readonly #prefix: string;
  readonly #loopback: boolean;
  #next: number;

  constructor(
    dir: string,
    name: string,
    inUse: (ip: string, uid: string) => boolean = () => false,
    mode: PodNetworkMode = podNetworkMode(),
  ) {
    this.#file = join(dir, 'next-pod-ip');
    this.#inUse = inUse;
    this.#prefix = prefixes[mode];
    this.#loopback = mode === 'loopback';
    this.#next = existsSync(this.#file) ? Number(readFileSync(this.#file, 'utf8')) || first : startFor(name);
  }

  /** The address of this Pod: the one it had (when free), else a new one. */
  allocate(uid: string, previous?: string): string {
    const held = this.#live.get(uid);
    if (held) return held;
    // In the loopback mode Pods share the host's sockets, so a listener there holds an address too.
    const taken = (ip: string): boolean =>
      ip === GATEWAY ||
      [...this.#live.values()].includes(ip) ||
      this.#inUse(ip, uid) ||
      (this.#loopback && socketBound(ip));
    if (previous?.startsWith(this.#prefix) && !taken(previous)) {
      this.#live.set(uid, previous);
      return previous;
    }
    for (let i = 0; i <= last - first; i++) {
      const n = this.#next;
      this.#next = n >= last ? first : n + 1;
      const ip = `${this.#prefix}${Math.floor(n / 256)}.${n % 256}`;
      if (n % 256 === 0 || n % 256 === 255 || taken(ip)) continue;
      writeFileSync(this.#file, String(this.#next));
      this.#live.set(uid, ip);
      return ip;
    }
    throw new Error(`no free Pod address left in ${this.#prefix}0.0/16`);
  }

  /** Frees the Pod's address. */
  release(uid: string): void {
    this.#live.delete(uid);
  }
}
