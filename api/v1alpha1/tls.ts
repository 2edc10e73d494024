/** EtcdCluster.spec.tls: certificates from Secrets the user brings, for clients and for peers. */
import { s } from '../schema.ts';

/** The keys every TLS Secret the operator is given must hold (a kubernetes.io/tls Secret plus ca.crt). */
export const TLS_SECRET_KEYS = ['tls.crt', 'tls.key', 'ca.crt'] as const;

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

const client = s.object(
  "TLS on etcd's client port (2379). Members serve https with secretRef's certificate, which must cover every member's name (<member>.<cluster>.<namespace>.svc; a wildcard *.<cluster>.<namespace>.svc also covers the members to come) and allow server and client auth; they accept only clients whose certificate secretRef's ca.crt signed (--client-cert-auth). operatorSecretRef is the operator's own client certificate, signed by that CA and allowing client auth, used for every call the operator makes to etcd (probes, membership changes, snapshot Jobs); its ca.crt is the CA the operator checks the members' certificates against.",
  { secretRef, operatorSecretRef: secretRef },
  {
    name: 'ClientTLS',
    required: ['secretRef'],
    rules: [
      {
        rule: 'has(self.operatorSecretRef)',
        message:
          "tls.client needs operatorSecretRef: with client TLS on, etcd refuses every client without a certificate its CA signed, the operator's own calls included",
        fieldPath: '.operatorSecretRef',
        reason: 'FieldValueRequired',
      },
      {
        rule: '!has(self.operatorSecretRef) || self.operatorSecretRef.name != self.secretRef.name',
        message:
          "tls.client.operatorSecretRef must name another Secret than tls.client.secretRef: the operator's client certificate is its own identity, and it is mounted into snapshot Jobs where the members' serving key has no business",
        fieldPath: '.operatorSecretRef',
      },
    ],
  },
);

const peer = s.object(
  "TLS between members (port 2380). Each member serves and dials its peers over https with secretRef's certificate, which must cover every member's name (<member>.<cluster>.<namespace>.svc; a wildcard *.<cluster>.<namespace>.svc also covers the members to come) and allow server and client auth; it accepts only peers whose certificate secretRef's ca.crt signed (--peer-client-cert-auth).",
  { secretRef },
  { name: 'PeerTLS', required: ['secretRef'] },
);

/** spec.tls of an EtcdCluster. */
export const tls = s.object(
  'TLS for clients and peers, from Secrets you create (see docs/security.md for what the certificates must cover). Fixed at creation: TLS cannot be added, removed or switched on a running cluster. Renewing a certificate inside the same Secret needs no change here.',
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
