/**
 * The digest of the CA certificates a cluster's members are to trust: the ca.crt of its client and
 * peer Secrets. etcd reads --trusted-ca-file and --peer-trusted-ca-file once, at start, so a new
 * CA reaches a member only through a restart; a changed digest is what makes the cluster roll
 * them, one at a time (EtcdMember spec.trust, and the Pod annotation of the same name).
 *
 * Each certificate of a bundle counts by its SHA-256 fingerprint, in any order: the same CAs
 * written again (re-encoded, reordered, another line ending) roll nothing.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { tlsSources } from './tls-sources.ts';

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** The fingerprints of a PEM bundle's certificates, sorted; null when it holds none that parses. */
export function bundleFingerprints(pem: Buffer | string): string[] | null {
  const blocks = String(pem).match(PEM_BLOCK) ?? [];
  const prints: string[] = [];
  for (const block of blocks) {
    try {
      prints.push(new X509Certificate(block).fingerprint256);
    } catch {
      return null;
    }
  }
  return prints.length > 0 ? [...new Set(prints)].sort() : null;
}

/**
 * A short digest (16 hex digits) of the client and peer CA bundles; a plane without TLS is left
 * out. Null when a bundle given holds no certificate that parses: no digest is better than a
 * wrong one, which would restart every member for nothing.
 */
export function trustDigest(bundles: {
  readonly client?: Buffer | string | undefined;
  readonly peer?: Buffer | string | undefined;
}): string | null {
  const parts: string[] = [];
  for (const plane of ['client', 'peer'] as const) {
    const pem = bundles[plane];
    if (pem === undefined) continue;
    const prints = bundleFingerprints(pem);
    if (!prints) return null;
    parts.push(`${plane}:${prints.join(',')}`);
  }
  if (parts.length === 0) return null;
  return createHash('sha256').update(parts.join(';')).digest('hex').slice(0, 16);
}

/**
 * The digest of `cluster`'s client and peer Secrets, their ca.crt looked up by Secret name; null
 * without TLS, or when a Secret the cluster names has no ca.crt (yet): a plane left out would be
 * another, wrong digest.
 */
export function clusterTrustDigest(
  cluster: Pick<EtcdCluster, 'metadata' | 'spec'>,
  caOf: (secret: string) => Buffer | undefined,
): string | null {
  const { client, peer } = tlsSources(cluster);
  const clientCA = client && caOf(client.secret);
  const peerCA = peer && caOf(peer.secret);
  if ((client && !clientCA) || (peer && !peerCA)) return null;
  return trustDigest({ client: clientCA, peer: peerCA });
}
