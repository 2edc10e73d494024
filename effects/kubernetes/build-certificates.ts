/**
 * The cert-manager Certificates of a cluster whose spec.tls names an issuer: the members' client
 * serving certificate, their peer certificate and the operator's own client certificate, each
 * owned by the EtcdCluster and writing the Secret `<cluster>-<plane>-tls` that the Pods mount and
 * the operator reads, exactly as a Secret the user brings.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ROOT_USER, type EtcdCluster, type TLSIssuerReference } from '../../api/v1alpha1/index.ts';
import { clientServiceName, clusterLabels, ownedMeta } from './meta.ts';
import { authEnabled, issuedName, type TLSPlane } from './tls-sources.ts';

/** Where cert-manager serves Certificates. */
export const CERTIFICATES = { group: 'cert-manager.io', version: 'v1', plural: 'certificates' } as const;

/** The fields of a cert-manager Certificate's spec the operator sets. */
export interface CertificateSpec {
  readonly secretName: string;
  readonly secretTemplate: { readonly labels: Record<string, string> };
  readonly issuerRef: { readonly name: string; readonly kind: string; readonly group: string };
  readonly commonName?: string;
  readonly dnsNames?: readonly string[];
  readonly ipAddresses?: readonly string[];
  readonly usages: readonly string[];
  readonly privateKey: { readonly algorithm: 'ECDSA'; readonly size: 256; readonly rotationPolicy: 'Always' };
}

/** A cert-manager Certificate (cert-manager.io/v1). */
export interface Certificate {
  readonly apiVersion: 'cert-manager.io/v1';
  readonly kind: 'Certificate';
  readonly metadata: V1ObjectMeta;
  readonly spec: CertificateSpec;
  readonly status?: {
    readonly conditions?: readonly {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      observedGeneration?: number;
    }[];
  };
}

/** Common name of the operator's certificate without auth (etcd reads it only with auth on). */
export const OPERATOR_COMMON_NAME = 'etcd-operator';

/** What a member certificate serves and dials with. cert-manager's default key usages plus both extended ones. */
const MEMBER_USAGES = ['digital signature', 'key encipherment', 'server auth', 'client auth'];

/**
 * The names every member certificate covers. Wildcards, because a member's name is never reused
 * (a replacement or a scale-up brings demo-3, demo-4...); with and without the cluster domain,
 * because the operator dials `<member>.<cluster>.<ns>.svc` and etcd checks a peer against the
 * name a reverse lookup of its address gives (`....svc.cluster.local`). 127.0.0.1: a member
 * dialling itself, and every Pod on the project's local node.
 */
export function memberNames(cluster: Pick<EtcdCluster, 'metadata'>): { dnsNames: string[]; ipAddresses: string[] } {
  const name = cluster.metadata.name ?? '';
  const ns = cluster.metadata.namespace ?? '';
  return { dnsNames: [`*.${name}.${ns}.svc`, `*.${name}.${ns}.svc.cluster.local`], ipAddresses: ['127.0.0.1'] };
}

/** The names a client may reach the client Service by, short and long, and localhost for a port-forward. */
export function clientServiceNames(cluster: Pick<EtcdCluster, 'metadata'>): string[] {
  const svc = clientServiceName(cluster.metadata.name ?? '');
  const ns = cluster.metadata.namespace ?? '';
  return [svc, `${svc}.${ns}`, `${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`, 'localhost'];
}

function certificate(
  cluster: EtcdCluster,
  plane: TLSPlane,
  issuer: TLSIssuerReference,
  fields: Pick<CertificateSpec, 'commonName' | 'dnsNames' | 'ipAddresses' | 'usages'>,
): Certificate {
  const name = issuedName(cluster.metadata.name ?? '', plane);
  const labels = clusterLabels(cluster.metadata.name ?? '');
  return {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: ownedMeta(name, cluster.metadata.namespace ?? '', labels, cluster, cluster.spec.additionalMetadata),
    spec: {
      secretName: name,
      // The Secret is cert-manager's, not owned by anything: these labels find it (kubectl delete secret -l).
      secretTemplate: { labels },
      issuerRef: { name: issuer.name, kind: issuer.kind ?? 'Issuer', group: issuer.group ?? CERTIFICATES.group },
      ...fields,
      // A new key with every certificate; P-256 as the rest of the project's certificates.
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    },
  };
}

/** The Certificates the cluster's spec.tls asks cert-manager for, client and operator before peer; none without an issuer. */
export function buildCertificates(cluster: EtcdCluster): Certificate[] {
  const { client, peer } = cluster.spec.tls ?? {};
  const members = memberNames(cluster);
  const out: Certificate[] = [];
  if (client?.issuerRef) {
    out.push(
      certificate(cluster, 'client', client.issuerRef, {
        dnsNames: [...members.dnsNames, ...clientServiceNames(cluster)],
        ipAddresses: members.ipAddresses,
        usages: MEMBER_USAGES,
      }),
      // Its common name is its etcd user with auth on: root, so it needs no password.
      certificate(cluster, 'operator', client.issuerRef, {
        commonName: authEnabled(cluster) ? ROOT_USER : OPERATOR_COMMON_NAME,
        usages: ['digital signature', 'key encipherment', 'client auth'],
      }),
    );
  }
  if (peer?.issuerRef)
    out.push(
      certificate(cluster, 'peer', peer.issuerRef, {
        dnsNames: members.dnsNames,
        ipAddresses: members.ipAddresses,
        usages: MEMBER_USAGES,
      }),
    );
  return out;
}
