/**
 * Pod addresses: one per Pod from 10.244.0.0/16 (on the Pod network's bridge); never one that
 * is in use.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GATEWAY } from '../network/podNetwork.ts';

const first = 1;
const last = 256 * 256 - 2;
const prefix = '10.244.';

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
  #next: number;

  constructor(dir: string, name: string, inUse: (ip: string, uid: string) => boolean = () => false) {
    this.#file = join(dir, 'next-pod-ip');
    this.#inUse = inUse;
    this.#next = existsSync(this.#file) ? Number(readFileSync(this.#file, 'utf8')) || first : startFor(name);
  }

  /** The address of this Pod: the one it had (when free), else a new one. */
  allocate(uid: string, previous?: string): string {
    const held = this.#live.get(uid);
    if (held) return held;
    const taken = (ip: string): boolean =>
      ip === GATEWAY || [...this.#live.values()].includes(ip) || this.#inUse(ip, uid);
    if (previous?.startsWith(prefix) && !taken(previous)) {
      this.#live.set(uid, previous);
      return previous;
    }
    for (let i = 0; i <= last - first; i++) {
      const n = this.#next;
      this.#next = n >= last ? first : n + 1;
      const ip = `${prefix}${Math.floor(n / 256)}.${n % 256}`;
      if (n % 256 === 0 || n % 256 === 255 || taken(ip)) continue;
      writeFileSync(this.#file, String(this.#next));
      this.#live.set(uid, ip);
      return ip;
    }
    throw new Error(`no free Pod address left in ${prefix}0.0/16`);
  }

  /** Frees the Pod's address. */
  release(uid: string): void {
    this.#live.delete(uid);
  }
}
