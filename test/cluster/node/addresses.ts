/** Loopback addresses for Pods: one per Pod from 127.10.0.0/16, never one a live Pod holds. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const first = 1;
const last = 256 * 256 - 2;

function ipOf(n: number): string {
  return `127.10.${Math.floor(n / 256)}.${n % 256}`;
}

/**
 * Hands out addresses round-robin from a counter kept in the node's directory, so an address
 * freed by a deleted Pod is the last to be reused (clients may still hold it) and a restarted
 * node does not hand out what it handed out before.
 */
export class AddressPool {
  readonly #file: string;
  readonly #live = new Map<string, string>();
  #next: number;

  constructor(dir: string) {
    this.#file = join(dir, 'next-pod-ip');
    this.#next = existsSync(this.#file) ? Number(readFileSync(this.#file, 'utf8')) || first : first;
  }

  /** The address of this Pod: the one it had (when free), else a new one. */
  allocate(uid: string, previous?: string): string {
    const held = this.#live.get(uid);
    if (held) return held;
    const taken = new Set(this.#live.values());
    if (previous?.startsWith('127.10.') && !taken.has(previous)) {
      this.#live.set(uid, previous);
      return previous;
    }
    for (let i = 0; i <= last - first; i++) {
      const n = this.#next;
      this.#next = n >= last ? first : n + 1;
      if (n % 256 === 0 || n % 256 === 255 || taken.has(ipOf(n))) continue;
      writeFileSync(this.#file, String(this.#next));
      this.#live.set(uid, ipOf(n));
      return ipOf(n);
    }
    throw new Error('no free Pod address left in 127.10.0.0/16');
  }

  /** Marks an address as held (a Pod found running when the node starts). */
  reserve(uid: string, ip: string): void {
    this.#live.set(uid, ip);
  }

  /** Frees the Pod's address. */
  release(uid: string): void {
    this.#live.delete(uid);
  }
}
