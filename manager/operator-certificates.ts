/**
 * The operator's own client certificate for each cluster with client TLS, read from the Secret
 * spec.tls.client.operatorSecretRef names. The manager may only get Secrets, by name (no list, no
 * watch: it never sees the others), so it reads this one again at most once a minute, which is
 * how a renewed certificate reaches it; one it could not use (not issued yet, say) is read again
 * after 5 s. The contents live in memory only, never in a log, the journal or a status: what is
 * wrong with the Secret is said by name and key.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/v1alpha1/index.ts';
import type { EtcdClientTLS } from '../effects/etcd/index.ts';
import { checkTLSSecret, operatorTLSUse } from '../effects/kubernetes/index.ts';

/** What was last read for one cluster: the certificate, or why there is none. */
export interface OperatorCredentials {
  readonly tls?: EtcdClientTLS;
  readonly problem?: string;
}

interface Entry extends OperatorCredentials {
  readonly readAt: number;
  /** The Secret's name and resourceVersion the entry was made from. */
  readonly from: string;
}

/** Reads a Secret by namespace and name; null when it does not exist. */
export type SecretReader = (namespace: string, name: string) => Promise<V1Secret | null>;

/** How often the Secrets of a cluster are read again: the manager cannot watch them. */
export interface SecretReadOptions {
  readonly now?: () => number;
  /** After a read that gave something usable (default a minute). */
  readonly maxAgeMs?: number;
  /** After one that did not: a Secret not there yet, or wrong (default 5 s). */
  readonly problemAgeMs?: number;
}

/** What reads Secrets by name at most once per age, sooner while what it read is unusable. */
export abstract class SecretReads {
  protected readonly read: SecretReader;
  protected readonly now: () => number;
  readonly #maxAgeMs: number;
  readonly #problemAgeMs: number;

  constructor(read: SecretReader, options: SecretReadOptions = {}) {
    this.read = read;
    this.now = options.now ?? Date.now;
    this.#maxAgeMs = options.maxAgeMs ?? 60_000;
    this.#problemAgeMs = options.problemAgeMs ?? 5_000;
  }

  /** Whether a read made at `readAt`, usable or not, still stands at `now`. */
  protected fresh(readAt: number, usable: boolean, now: number): boolean {
    return now - readAt < (usable ? this.#maxAgeMs : this.#problemAgeMs);
  }
}

/** The operator's client certificates, by cluster uid. */
export class OperatorCertificates extends SecretReads {
  readonly #entries = new Map<string, Entry>();

  /**
   * Reads the cluster's operator Secret unless it was read less than a minute ago (5 s when it
   * could not be used: cert-manager may be issuing it while the seed starts); returns why there is
   * no usable certificate, or null when there is one (or the cluster has no client TLS). A failed
   * read (the API server away) keeps what was read before.
   */
  async refresh(cluster: EtcdCluster): Promise<string | null> {
    const uid = cluster.metadata.uid ?? '';
    const use = operatorTLSUse(cluster);
    if (!use) {
      this.#entries.delete(uid);
      return null;
    }
    const now = this.now();
    const before = this.#entries.get(uid);
    if (before && this.fresh(before.readAt, before.tls !== undefined, now)) return before.problem ?? null;
    let secret: V1Secret | null;
    try {
      secret = await this.read(use.namespace, use.name);
    } catch (err) {
      if (before?.tls) return null;
      const problem = `reading Secret ${use.namespace}/${use.name} (${use.field}) failed: ${err instanceof Error ? err.message : String(err)}`;
      this.#entries.set(uid, { readAt: now, from: '', problem });
      return problem;
    }
    const from = `${use.name}@${secret?.metadata?.resourceVersion ?? ''}`;
    // The same Secret as before: the same object, so the etcd clients built on it stay.
    if (before?.tls && before.from === from) {
      this.#entries.set(uid, { ...before, readAt: now });
      return null;
    }
    const checked = checkTLSSecret(secret, use, now);
    this.#entries.set(
      uid,
      'files' in checked ? { readAt: now, from, tls: checked.files } : { readAt: now, from, problem: checked.problem },
    );
    return 'problem' in checked ? checked.problem : null;
  }

  /** What was last read for the cluster with this uid. */
  get(uid: string): OperatorCredentials | undefined {
    const e = this.#entries.get(uid);
    if (!e) return undefined;
    return e.tls ? { tls: e.tls } : { problem: e.problem ?? '' };
  }

  /** Forgets a cluster that is gone. */
  forget(uid: string): void {
    this.#entries.delete(uid);
  }
}
