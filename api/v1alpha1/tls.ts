/**
 * EtcdCluster.spec.tls: certificates for clients and for peers, either from Secrets the user
 * brings or issued by cert-manager from an issuer the user names (the operator then creates the
 * Certificates and uses the Secrets cert-manager writes exactly as brought ones).
 */
import { s } from '../schema.ts';

/** The keys every TLS Secret the operator is given must hold (a kubernetes.io/tls Secret plus ca.crt). */
export const TLS_SECRET_KEYS = ['tls.crt', 'tls.key', 'ca.crt'] as const;

/** The etcd user (and role) the operator is with spec.auth.enabled: its client certificate's common name. */
export const ROOT_USER = 'root';

/** cert-manager's API group: the default group of an issuerRef. */
export const CERT_MANAGER_GROUP = 'cert-manager.io';

/** A Secret by name, in the cluster's namespace. */
const secretRef = s.object(
  "A kubernetes.io/tls Secret in the cluster's namespace holding tls.crt, tls.key and ca.crt (PEM).",
  {
    name: s.string('Secret name.', {
      maxLength: 253,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    }),
  },
  { name: 'TLSSecretReference', required: ['name'] },
);

/** A cert-manager issuer, as a Certificate's spec.issuerRef names it. */
const issuerRef = s.object(
  "A cert-manager issuer the operator asks for the certificates (it creates cert-manager Certificates owned by the EtcdCluster, and uses the Secrets cert-manager writes). It must write ca.crt into them (a CA issuer does; ACME issuers do not): that CA is the one etcd trusts. An Issuer is looked up in the cluster's namespace.",
  {
    name: s.string('Name of the Issuer or ClusterIssuer.', {
      maxLength: 253,
      pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    }),
    kind: s.string("Issuer (in the cluster's namespace) or ClusterIssuer; an external issuer's kind with its group.", {
      default: 'Issuer',
      maxLength: 63,
    }),
    group: s.string('API group of the issuer.', { default: CERT_MANAGER_GROUP, maxLength: 253 }),
  },
  {
    name: 'TLSIssuerReference',
    required: ['name'],
    rules: [
      {
        rule: `!has(self.group) || self.group != '${CERT_MANAGER_GROUP}' || !has(self.kind) || self.kind in ['Issuer', 'ClusterIssuer']`,
        message: `issuerRef.kind must be Issuer or ClusterIssuer for group ${CERT_MANAGER_GROUP}`,
        fieldPath: '.kind',
      },
    ],
  },
);

/** Exactly one of secretRef and issuerRef. */
const oneSource = (plane: string) => ({
  rule: 'has(self.secretRef) != has(self.issuerRef)',
  message: `tls.${plane} needs exactly one of secretRef (a Secret you bring) and issuerRef (cert-manager issues it)`,
});

const client = s.object(
  "TLS on etcd's client port (2379). Members serve https with the certificate of secretRef, or of a cert-manager Certificate from issuerRef; it must cover every member's name (<member>.<cluster>.<namespace>.svc; a wildcard *.<cluster>.<namespace>.svc also covers the members to come) and allow server and client auth. Members accept only clients whose certificate that ca.crt signed (--client-cert-auth). The operator calls etcd with its own client certificate: operatorSecretRef with secretRef (signed by that CA, allowing client auth; its ca.crt is the CA the operator checks members against), or, with issuerRef, one it has issued from the same issuer.",
  { secretRef, issuerRef, operatorSecretRef: secretRef },
  {
    name: 'ClientTLS',
    rules: [
      oneSource('client'),
      {
        rule: '!has(self.secretRef) || has(self.operatorSecretRef)',
        message:
          "tls.client needs operatorSecretRef: with client TLS on, etcd refuses every client without a certificate its CA signed, the operator's own calls included",
        fieldPath: '.operatorSecretRef',
        reason: 'FieldValueRequired',
      },
      {
        rule: '!has(self.issuerRef) || !has(self.operatorSecretRef)',
        message:
          "tls.client.operatorSecretRef cannot be set with tls.client.issuerRef: the operator has its own client certificate issued from the same issuer, so that the members' CA signs it",
        fieldPath: '.operatorSecretRef',
      },
      {
        rule: '!has(self.operatorSecretRef) || !has(self.secretRef) || self.operatorSecretRef.name != self.secretRef.name',
        message:
          "tls.client.operatorSecretRef must name another Secret than tls.client.secretRef: the operator's client certificate is its own identity, and it is mounted into snapshot Jobs where the members' serving key has no business",
        fieldPath: '.operatorSecretRef',
      },
    ],
  },
);

const peer = s.object(
  "TLS between members (port 2380). Each member serves and dials its peers over https with the certificate of secretRef, or of a cert-manager Certificate from issuerRef; it must cover every member's name (<member>.<cluster>.<namespace>.svc; a wildcard *.<cluster>.<namespace>.svc also covers the members to come) and allow server and client auth. A member accepts only peers whose certificate that ca.crt signed (--peer-client-cert-auth).",
  { secretRef, issuerRef },
  { name: 'PeerTLS', rules: [oneSource('peer')] },
);

/** spec.tls of an EtcdCluster. */
export const tls = s.object(
  'TLS for clients and peers, from Secrets you create or issued by cert-manager (see docs/security.md for what the certificates must cover). Fixed at creation: TLS cannot be added, removed or switched on a running cluster. Renewing a certificate inside the same Secret (cert-manager does so by itself) needs no change here.',
  { client, peer },
  {
    name: 'TLSSpec',
    rules: [
      { rule: 'has(self.client) || has(self.peer)', message: 'spec.tls needs client, peer or both' },
      {
        rule: 'self == oldSelf',
        message:
          'spec.tls cannot change after creation: a running member cannot switch its URLs or the Secrets of its certificates; create a new cluster with the TLS you want (a snapshot restores the data into it)',
      },
    ],
  },
);

/** spec.auth of an EtcdCluster. */
export const auth = s.object(
  "etcd's own authentication (users and roles). Needs client TLS: the operator is etcd's root user by its client certificate, whose common name is root, so it holds no password. Fixed at creation.",
  {
    enabled: s.boolean(
      "Turn etcd authentication on: once the seed member runs, the operator adds the user root (no password: it authenticates by certificate) with the role root, and enables auth. Every client then needs a user: a client certificate's common name is its user name, or a user name and password. With a Secret, the operator's certificate (tls.client.operatorSecretRef) must have the common name root; with an issuer, the operator issues it so. See docs/security.md for adding users and roles.",
      { default: false },
    ),
  },
  { name: 'AuthSpec', required: ['enabled'] },
);
