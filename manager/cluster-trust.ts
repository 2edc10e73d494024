/**
 * The CA digest of each cluster with TLS (effects/kubernetes/trust.ts): the ca.crt of its client
 * and peer Secrets, read by name (the manager may only get Secrets) at most once a minute, 5 s
 * while one is missing or holds no CA. Only ca.crt is looked at, and only its digest is kept.
 * A changed digest rolls the members onto the new CAs; none known (not read yet, or a Secret away)
 * rolls nothing.
 */
import type { EtcdCluster } from '../api/v1alpha1/index.ts';
import { tlsSources } from '../effects/kubernetes/index.ts';
import { clusterTrustDigest } from '../effects/kubernetes/trust.ts';
import { SecretReads } from './operator-certificates.ts';

interface Entry {
  readonly readAt: number;
  readonly digest: string | null;
}

/** The CA digests of the clusters, by cluster uid. */
export class ClusterTrust extends SecretReads {
  readonly #entries = new Map<string, Entry>();

  /**
   * The cluster's digest, its Secrets read again when the last read is over a minute old (5 s
   * when it gave none); undefined without TLS or while none is known. A failed read (the API
   * server away) keeps the digest read before.
   */
  async refresh(cluster: EtcdCluster): Promise<string | undefined> {
    const uid = cluster.metadata.uid ?? '';
    const { client, peer } = tlsSources(cluster);
    if (!client && !peer) {
      this.#entries.delete(uid);
      return undefined;
    }
    const now = this.now();
    const before = this.#entries.get(uid);
    if (before && this.fresh(before.readAt, before.digest !== null, now)) return before.digest ?? undefined;
    const namespace = cluster.metadata.namespace ?? '';
    const cas = new Map<string, Buffer>();
    let digest: string | null;
    try {
      for (const source of [client, peer]) {
        const ca = source && (await this.read(namespace, source.secret))?.data?.['ca.crt'];
        if (source && ca) cas.set(source.secret, Buffer.from(ca, 'base64'));
      }
      digest = clusterTrustDigest(cluster, (secret) => cas.get(secret));
    } catch {
      return before?.digest ?? undefined;
    }
    // A Secret missing for now (cert-manager issuing it) keeps the digest known before.
    this.#entries.set(uid, { readAt: now, digest: digest ?? before?.digest ?? null });
    return digest ?? before?.digest ?? undefined;
  }

  /** Forgets a cluster that is gone. */
  forget(uid: string): void {
    this.#entries.delete(uid);
  }
}
