import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../../api/v1alpha1/index.ts';
import { checkTLSSecret, memberTLSUses, type TLSSecretUse } from '../../../effects/kubernetes/tls-secrets.ts';
import { TestPki, tlsSecret, type Leaf } from '../etcd/test-pki.ts';

let pki: TestPki;
let member: Leaf;
let serverOnly: Leaf;
let operator: Leaf;
let other: Leaf;
let nameless: Leaf;

/** When the checks run: after every leaf is issued (a leaf is valid from the second it was signed). */
let NOW: number;
const peerUse: TLSSecretUse = {
  namespace: 'ns',
  name: 'demo-peer',
  field: 'spec.tls.peer.secretRef',
  hosts: ['demo-3.demo.ns.svc'],
  usages: ['serverAuth', 'clientAuth'],
};
const operatorUse: TLSSecretUse = {
  namespace: 'ns',
  name: 'demo-operator',
  field: 'spec.tls.client.operatorSecretRef',
  hosts: [],
  usages: ['clientAuth'],
};

beforeAll(async () => {
  pki = await TestPki.create();
  const sans = ['DNS:*.demo.ns.svc', 'DNS:*.demo.ns.svc.cluster.local', 'DNS:demo-client.ns.svc', 'DNS:localhost'];
  member = await pki.issue({ name: 'member', subject: '/CN=member', usage: 'serverAuth,clientAuth', sans });
  serverOnly = await pki.issue({ name: 'server', subject: '/CN=server', usage: 'serverAuth', sans });
  operator = await pki.issue({ name: 'operator', subject: '/CN=etcd-operator', usage: 'clientAuth' });
  other = await pki.issue({ name: 'other', subject: '/CN=other', usage: 'serverAuth,clientAuth', sans: ['DNS:x.y'] });
  // An empty subject, as cert-manager issues a Certificate without commonName (the members' own).
  nameless = await pki.issue({ name: 'nameless', subject: '/', usage: 'serverAuth,clientAuth', sans });
  NOW = Date.now();
});
afterAll(() => pki?.remove());

/** Every byte of a leaf, as PEM text and as the base64 a Secret carries. */
const secretBytes = (leaf: Leaf): string[] =>
  [leaf.cert, leaf.key, leaf.ca].flatMap((f) => {
    const pem = readFileSync(f, 'utf8');
    const body = pem.split('\n').filter((l) => l && !l.startsWith('-----'))[0] ?? '';
    return [body, readFileSync(f).toString('base64').slice(0, 40)];
  });

const problemOf = (r: ReturnType<typeof checkTLSSecret>): string => ('problem' in r ? r.problem : '');

describe('TLS Secrets: checked before a member is built on them', () => {
  it('a Secret whose certificate covers the member and allows both usages gives its files', () => {
    const r = checkTLSSecret(tlsSecret('demo-peer', member), peerUse, NOW);
    expect('files' in r && r.files.key.equals(readFileSync(member.key))).toBe(true);
    expect('files' in checkTLSSecret(tlsSecret('demo-operator', operator), operatorUse, NOW)).toBe(true);
  });

  it('a certificate with an empty subject (cert-manager without commonName) is checked, not thrown on', () => {
    expect('files' in checkTLSSecret(tlsSecret('demo-peer', nameless), peerUse, NOW)).toBe(true);
    expect(
      problemOf(checkTLSSecret(tlsSecret('demo-peer', nameless), { ...peerUse, commonName: 'root' }, NOW)),
    ).toContain('tls.crt has the common name (none), not root');
  });

  it.each([
    ['missing', () => null, 'Secret ns/demo-peer (spec.tls.peer.secretRef) does not exist'],
    [
      'without tls.key and ca.crt',
      () => {
        const s = tlsSecret('demo-peer', member);
        return { ...s, data: { 'tls.crt': s.data!['tls.crt']! } };
      },
      'Secret ns/demo-peer (spec.tls.peer.secretRef) has no tls.key, ca.crt',
    ],
    [
      "with another certificate's key",
      () => {
        const s = tlsSecret('demo-peer', member);
        return { ...s, data: { ...s.data, 'tls.key': tlsSecret('x', other).data!['tls.key']! } };
      },
      'Secret ns/demo-peer (spec.tls.peer.secretRef): tls.key is not the private key of tls.crt',
    ],
    [
      'whose certificate does not cover the member',
      () => tlsSecret('demo-peer', other),
      'Secret ns/demo-peer (spec.tls.peer.secretRef): tls.crt does not cover demo-3.demo.ns.svc (it covers DNS:x.y)',
    ],
    [
      'whose certificate allows server auth only',
      () => tlsSecret('demo-peer', serverOnly),
      'Secret ns/demo-peer (spec.tls.peer.secretRef): tls.crt does not allow clientAuth (extended key usage)',
    ],
    [
      'whose tls.crt is not a certificate',
      () => {
        const s = tlsSecret('demo-peer', member);
        return { ...s, data: { ...s.data, 'tls.crt': Buffer.from('hello').toString('base64') } };
      },
      'Secret ns/demo-peer (spec.tls.peer.secretRef): tls.crt is not a PEM certificate',
    ],
  ])('a Secret %s is refused, named with its field and key', (_, secret, problem) => {
    const r = checkTLSSecret(secret(), peerUse, NOW);
    expect(problemOf(r)).toBe(problem);
  });

  it('an expired certificate is refused with the date it expired', () => {
    const r = checkTLSSecret(tlsSecret('demo-peer', member), peerUse, Date.parse('2100-01-01T00:00:00Z'));
    expect(problemOf(r)).toMatch(/^Secret ns\/demo-peer \(spec\.tls\.peer\.secretRef\): tls\.crt expired at /);
  });

  it('what is wrong is said without a byte of the Secret', () => {
    const bad = tlsSecret('demo-peer', other);
    const problems = [
      problemOf(checkTLSSecret(bad, peerUse, NOW)),
      problemOf(checkTLSSecret({ ...bad, data: { ...bad.data, 'tls.key': bad.data!['ca.crt']! } }, peerUse, NOW)),
    ];
    for (const p of problems) {
      expect(p).not.toBe('');
      for (const bytes of secretBytes(other)) expect(p).not.toContain(bytes);
      expect(p).not.toContain('BEGIN');
    }
  });

  it("a member's uses: the client and peer certificates for its name, the operator's for client auth", () => {
    const cluster = {
      metadata: { name: 'demo', namespace: 'ns' },
      spec: {
        tls: {
          client: { secretRef: { name: 'demo-client' }, operatorSecretRef: { name: 'demo-operator' } },
          peer: { secretRef: { name: 'demo-peer' } },
        },
      },
    } as unknown as EtcdCluster;
    expect(memberTLSUses(cluster, 'demo-3')).toEqual([
      { ...peerUse, name: 'demo-client', field: 'spec.tls.client.secretRef' },
      operatorUse,
      peerUse,
    ]);
    expect(memberTLSUses({ ...cluster, spec: {} } as EtcdCluster, 'demo-3')).toEqual([]);
  });

  it("with issuers: the Secrets of the Certificates the operator made, named after the cluster; the operator's common name root with auth", () => {
    const ca = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' };
    const cluster = {
      metadata: { name: 'demo', namespace: 'ns' },
      spec: { tls: { client: { issuerRef: ca }, peer: { issuerRef: ca } }, auth: { enabled: true } },
    } as unknown as EtcdCluster;
    const issued = (plane: string, field: string) => ({
      name: `demo-${plane}-tls`,
      certificate: `demo-${plane}-tls`,
      field,
    });
    expect(memberTLSUses(cluster, 'demo-3')).toEqual([
      { ...peerUse, ...issued('client', 'spec.tls.client.issuerRef') },
      { ...operatorUse, ...issued('operator', 'spec.tls.client.issuerRef'), commonName: 'root' },
      { ...peerUse, ...issued('peer', 'spec.tls.peer.issuerRef') },
    ]);
    const [use] = memberTLSUses(cluster, 'demo-3');
    expect(problemOf(checkTLSSecret(null, use!, NOW))).toBe(
      'Secret ns/demo-client-tls (Certificate demo-client-tls from spec.tls.client.issuerRef) does not exist yet: cert-manager has not issued it (kubectl describe certificate -n ns demo-client-tls)',
    );
  });
});
