/** The cert-manager Certificates spec.tls asks for when it names issuers. */
import { describe, expect, it } from 'vitest';
import { buildCertificates, memberNames, type Certificate } from '../../../effects/kubernetes/build-certificates.ts';
import { memberHost } from '../../../effects/kubernetes/build-services.ts';
import { cluster } from './fixtures.ts';

const ca = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' };
const byName = (c: Certificate[]): Record<string, Certificate> =>
  Object.fromEntries(c.map((x) => [x.metadata.name ?? '', x]));
const owner = {
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdCluster',
  name: 'demo',
  uid: 'cluster-uid',
  controller: true,
  blockOwnerDeletion: true,
};
const labels = {
  'app.kubernetes.io/name': 'etcd',
  'app.kubernetes.io/managed-by': 'etcd-operator',
  'etcd-operator.dev/cluster': 'demo',
};
const privateKey = { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' };

describe('cert-manager Certificates of a cluster', () => {
  it('client and peer from issuers: three Certificates, owned by the EtcdCluster, each writing the Secret of its name', () => {
    const certs = buildCertificates(cluster({ tls: { client: { issuerRef: ca }, peer: { issuerRef: ca } } }));
    expect(certs.map((c) => c.metadata.name)).toEqual(['demo-client-tls', 'demo-operator-tls', 'demo-peer-tls']);
    for (const c of certs) {
      expect(c).toMatchObject({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate' });
      expect(c.metadata).toMatchObject({ namespace: 'ns', labels, ownerReferences: [owner] });
      expect(c.spec).toMatchObject({
        secretName: c.metadata.name,
        secretTemplate: { labels },
        issuerRef: ca,
        privateKey,
      });
    }
  });

  it("members' client certificate: every member's name with and without the cluster domain (wildcards), the client Service, localhost and 127.0.0.1; server and client auth", () => {
    const client = byName(buildCertificates(cluster({ tls: { client: { issuerRef: ca } } })))['demo-client-tls']!;
    expect(client.spec.dnsNames).toEqual([
      '*.demo.ns.svc',
      '*.demo.ns.svc.cluster.local',
      'demo-client',
      'demo-client.ns',
      'demo-client.ns.svc',
      'demo-client.ns.svc.cluster.local',
      'localhost',
    ]);
    expect(client.spec.ipAddresses).toEqual(['127.0.0.1']);
    expect(client.spec.usages).toEqual(['digital signature', 'key encipherment', 'server auth', 'client auth']);
    expect(client.spec.commonName).toBeUndefined();
  });

  it('the peer certificate: member names only, both usages', () => {
    const certs = buildCertificates(cluster({ tls: { peer: { issuerRef: { ...ca, kind: 'ClusterIssuer' } } } }));
    expect(certs).toHaveLength(1);
    expect(certs[0]?.spec).toMatchObject({
      secretName: 'demo-peer-tls',
      issuerRef: { name: 'ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      dnsNames: ['*.demo.ns.svc', '*.demo.ns.svc.cluster.local'],
      ipAddresses: ['127.0.0.1'],
      usages: ['digital signature', 'key encipherment', 'server auth', 'client auth'],
    });
  });

  it("the operator's certificate: client auth only, no names; its common name root with auth on (its etcd user), else etcd-operator", () => {
    const tls = { client: { issuerRef: ca } };
    const plain = byName(buildCertificates(cluster({ tls })))['demo-operator-tls']!;
    expect(plain.spec).toMatchObject({
      commonName: 'etcd-operator',
      usages: ['digital signature', 'key encipherment', 'client auth'],
    });
    expect(plain.spec.dnsNames).toBeUndefined();
    const withAuth = byName(buildCertificates(cluster({ tls, auth: { enabled: true } })))['demo-operator-tls']!;
    expect(withAuth.spec.commonName).toBe('root');
  });

  it('Secrets the user brings: no Certificate; a member name is covered by the wildcard of the names issued', () => {
    expect(buildCertificates(cluster())).toEqual([]);
    expect(
      buildCertificates(
        cluster({
          tls: { client: { secretRef: { name: 'a' }, operatorSecretRef: { name: 'b' } }, peer: { issuerRef: ca } },
        }),
      ).map((c) => c.metadata.name),
    ).toEqual(['demo-peer-tls']);
    const host = memberHost({ namespace: 'ns', name: 'demo' }, 'demo-17');
    expect(memberNames(cluster()).dnsNames[0]).toBe(`*.${host.split('.').slice(1).join('.')}`);
  });

  it("the user's additional metadata goes on the Certificates too, under the operator's labels", () => {
    const c = cluster({
      tls: { peer: { issuerRef: ca } },
      additionalMetadata: { labels: { team: 'db' }, annotations: { note: 'x' } },
    });
    expect(buildCertificates(c)[0]?.metadata).toMatchObject({
      labels: { team: 'db', ...labels },
      annotations: { note: 'x' },
    });
  });
});
