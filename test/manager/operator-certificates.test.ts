import type { V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { OperatorCertificates } from '../../manager/operator-certificates.ts';
import { TestPki, tlsSecret, type Leaf } from '../effects/etcd/test-pki.ts';

let pki: TestPki;
let operator: Leaf;
beforeAll(async () => {
  pki = await TestPki.create();
  operator = await pki.issue({ name: 'operator', subject: '/CN=etcd-operator', usage: 'clientAuth' });
});
afterAll(() => pki?.remove());

const cluster = (client = true): EtcdCluster =>
  ({
    metadata: { name: 'demo', namespace: 'ns', uid: 'u1' },
    spec: client ? { tls: { client: { secretRef: { name: 'member' }, operatorSecretRef: { name: 'op' } } } } : {},
  }) as unknown as EtcdCluster;

/** A store over a Secret the test swaps, counting the gets. */
function store(initial: V1Secret | null) {
  let secret = initial;
  let clock = Date.now();
  const reads: string[] = [];
  const certs = new OperatorCertificates(
    (ns, name) => {
      reads.push(`${ns}/${name}`);
      return Promise.resolve(secret);
    },
    { now: () => clock, maxAgeMs: 60_000 },
  );
  return {
    certs,
    reads,
    set: (s: V1Secret | null) => (secret = s),
    pass: (ms: number) => (clock += ms),
  };
}

describe("the operator's client certificates", () => {
  it('reads the Secret named by operatorSecretRef by name, at most once a minute', async () => {
    const s = store(tlsSecret('op', operator));
    expect(await s.certs.refresh(cluster())).toBeNull();
    const first = s.certs.get('u1')?.tls;
    expect(first?.key.toString()).toContain('PRIVATE KEY');
    s.pass(30_000);
    expect(await s.certs.refresh(cluster())).toBeNull();
    expect(s.reads).toEqual(['ns/op']);
    // Read again after a minute; the same Secret version keeps the same object (the clients stay).
    s.pass(31_000);
    await s.certs.refresh(cluster());
    expect(s.reads).toEqual(['ns/op', 'ns/op']);
    expect(s.certs.get('u1')?.tls).toBe(first);
    // A renewed Secret (a new resourceVersion) gives a new object: clients are built again on it.
    s.set({ ...tlsSecret('op', operator), metadata: { name: 'op', resourceVersion: '2' } });
    s.pass(61_000);
    await s.certs.refresh(cluster());
    expect(s.certs.get('u1')?.tls).not.toBe(first);
  });

  it('says what is wrong with the Secret, by name and key, and holds no certificate then', async () => {
    const s = store(null);
    expect(await s.certs.refresh(cluster())).toBe('Secret ns/op (spec.tls.client.operatorSecretRef) does not exist');
    expect(s.certs.get('u1')).toEqual({ problem: 'Secret ns/op (spec.tls.client.operatorSecretRef) does not exist' });
    const noKey = tlsSecret('op', operator);
    s.set({ ...noKey, metadata: { name: 'op', resourceVersion: '3' }, data: { 'tls.crt': noKey.data!['tls.crt']! } });
    s.pass(61_000);
    expect(await s.certs.refresh(cluster())).toBe(
      'Secret ns/op (spec.tls.client.operatorSecretRef) has no tls.key, ca.crt',
    );
  });

  it('a Secret it could not use is read again after 5 s, not a minute: cert-manager may be issuing it', async () => {
    const s = store(null);
    await s.certs.refresh(cluster());
    s.pass(4_000);
    await s.certs.refresh(cluster());
    expect(s.reads).toHaveLength(1);
    s.set(tlsSecret('op', operator));
    s.pass(1_500);
    expect(await s.certs.refresh(cluster())).toBeNull();
    expect(s.reads).toHaveLength(2);
  });

  it('with an issuer, reads the Secret of the Certificate it made; with auth, wants the common name root', async () => {
    const issued = {
      metadata: { name: 'demo', namespace: 'ns', uid: 'u1' },
      spec: {
        tls: { client: { issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } } },
        auth: { enabled: true },
      },
    } as unknown as EtcdCluster;
    const s = store(tlsSecret('demo-operator-tls', operator));
    expect(await s.certs.refresh(issued)).toBe(
      "Secret ns/demo-operator-tls (Certificate demo-operator-tls from spec.tls.client.issuerRef): tls.crt has the common name etcd-operator, not root: with spec.auth.enabled the operator is etcd's user root by its certificate's common name",
    );
    expect(s.reads).toEqual(['ns/demo-operator-tls']);
    s.set(tlsSecret('demo-operator-tls', await pki.issue({ name: 'root', subject: '/CN=root', usage: 'clientAuth' })));
    s.pass(5_000);
    expect(await s.certs.refresh(issued)).toBeNull();
  });

  it('reads nothing for a cluster without client TLS, and forgets a cluster that is gone', async () => {
    const s = store(tlsSecret('op', operator));
    expect(await s.certs.refresh(cluster(false))).toBeNull();
    expect(s.reads).toEqual([]);
    await s.certs.refresh(cluster());
    s.certs.forget('u1');
    expect(s.certs.get('u1')).toBeUndefined();
  });

  it('a failed read keeps the certificate read before', async () => {
    let fail = false;
    const certs = new OperatorCertificates(
      () => (fail ? Promise.reject(new Error('connection refused')) : Promise.resolve(tlsSecret('op', operator))),
      { maxAgeMs: 0 },
    );
    await certs.refresh(cluster());
    const before = certs.get('u1')?.tls;
    fail = true;
    expect(await certs.refresh(cluster())).toBeNull();
    expect(certs.get('u1')?.tls).toBe(before);
  });
});
