/**
 * The loopback address the proxy serves each Service on: its ClusterIP when the control plane
 * allocated from a loopback range, else one chosen here, so no packet ever goes to a ClusterIP
 * outside 127.0.0.0/8.
 */
import type { V1Service } from '@kubernetes/client-node';
import { isHeadless } from './selection.ts';

/** The pool used when ClusterIPs are not loopback: 127.253.0.1 to 127.253.255.254. */
const POOL_PREFIX = '127.253.';
const POOL_SIZE = 256 * 256 - 2;

/** Whether an IPv4 address is in 127.0.0.0/8. */
export function isLoopback(ip: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/** Ran out of loopback addresses for Services. */
export class AddressPoolError extends Error {
  readonly code = 'ERR_SERVICE_POOL_EXHAUSTED';
  override readonly name = 'AddressPoolError';
}

/**
 * Keeps one loopback address per Service (by uid) while the Service exists. With `asIs` (Pods
 * in their own network namespaces, Services DNATed by the kernel) every ClusterIP is served as it is.
 */
export class ServiceAddresses {
  readonly #chosen = new Map<string, string>();
  readonly #asIs: boolean;

  constructor(asIs = false) {
    this.#asIs = asIs;
  }

  /** Forgets Services that are gone and chooses addresses for new ones. */
  update(services: readonly V1Service[]): void {
    const live = new Set(services.map((s) => s.metadata?.uid ?? ''));
    for (const uid of this.#chosen.keys()) if (!live.has(uid)) this.#chosen.delete(uid);
    for (const service of services) {
      const uid = service.metadata?.uid ?? '';
      if (this.#asIs || !needsOwn(service) || this.#chosen.has(uid)) continue;
      this.#chosen.set(uid, this.#next());
    }
  }

  /** The address the proxy serves this Service on, if it has one. */
  get(service: V1Service): string | undefined {
    const ip = service.spec?.clusterIP ?? '';
    if (isHeadless(service) || service.spec?.type === 'ExternalName' || !ip) return undefined;
    return this.#asIs || isLoopback(ip) ? ip : this.#chosen.get(service.metadata?.uid ?? '');
  }

  #next(): string {
    const used = new Set(this.#chosen.values());
    for (let i = 1; i <= POOL_SIZE; i++) {
      const ip = `${POOL_PREFIX}${Math.floor(i / 256)}.${i % 256}`;
      if (i % 256 !== 0 && i % 256 !== 255 && !used.has(ip)) return ip;
    }
    throw new AddressPoolError(`no free Service address left in ${POOL_PREFIX}0.0/16`);
  }
}

function needsOwn(service: V1Service): boolean {
  const ip = service.spec?.clusterIP ?? '';
  return Boolean(ip) && !isHeadless(service) && service.spec?.type !== 'ExternalName' && !isLoopback(ip);
}
