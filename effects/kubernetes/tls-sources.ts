/**
 * Where each certificate of a cluster's spec.tls comes from: a Secret the user names, or the
 * Secret a cert-manager Certificate the operator made writes (named after the cluster, so the
 * rest of the operator reads both kinds of Secret the same way).
 */
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';

/** The three certificates: members' client serving one, members' peer one, the operator's client one. */
export type TLSPlane = 'client' | 'peer' | 'operator';

/** The Secret that holds one certificate, and what decides it. */
export interface TLSSecretSource {
  readonly secret: string;
  /** The field that names it (a secretRef), or the issuerRef it is issued from. */
  readonly field: string;
  /** The cert-manager Certificate that writes the Secret; absent for a Secret the user brings. */
  readonly certificate?: string;
}

/** The name of the Certificate the operator makes for a plane, and of the Secret it writes: `<cluster>-<plane>-tls`. */
export const issuedName = (cluster: string, plane: TLSPlane): string => `${cluster}-${plane}-tls`;

/** The Secret of each certificate the cluster has (none without spec.tls, no operator one without client TLS). */
export function tlsSources(
  cluster: Pick<EtcdCluster, 'metadata' | 'spec'>,
): Partial<Record<TLSPlane, TLSSecretSource>> {
  const name = cluster.metadata.name ?? '';
  const { client, peer } = cluster.spec.tls ?? {};
  const issued = (plane: TLSPlane, field: string): TLSSecretSource => ({
    secret: issuedName(name, plane),
    field,
    certificate: issuedName(name, plane),
  });
  const out: Partial<Record<TLSPlane, TLSSecretSource>> = {};
  if (client?.secretRef) out.client = { secret: client.secretRef.name, field: 'spec.tls.client.secretRef' };
  else if (client?.issuerRef) out.client = issued('client', 'spec.tls.client.issuerRef');
  if (client?.operatorSecretRef)
    out.operator = { secret: client.operatorSecretRef.name, field: 'spec.tls.client.operatorSecretRef' };
  else if (client?.issuerRef) out.operator = issued('operator', 'spec.tls.client.issuerRef');
  if (peer?.secretRef) out.peer = { secret: peer.secretRef.name, field: 'spec.tls.peer.secretRef' };
  else if (peer?.issuerRef) out.peer = issued('peer', 'spec.tls.peer.issuerRef');
  return out;
}

/** Whether etcd authentication is on (spec.auth.enabled, fixed at creation). */
export const authEnabled = (cluster: Pick<EtcdCluster, 'spec'> | undefined): boolean =>
  cluster?.spec.auth?.enabled === true;
