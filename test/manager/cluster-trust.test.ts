import { readFileSync } from 'node:fs';
import type { V1Secret } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { bundleFingerprints, trustDigest } from '../../effects/kubernetes/trust.ts';
import { ClusterTrust } from '../../manager/cluster-trust.ts';
import { TestPki, tlsSecret, type Leaf } from '../effects/etcd/test-pki.ts';

let oldCA: TestPki;
let newCA: TestPki;
let oldLeaf: Leaf;
let newLeaf: Leaf;
beforeAll(async () => {
  oldCA = await TestPki.create('etcd-trust-old-');
  newCA = await TestPki.create('etcd-trust-new-');
  oldLeaf = await oldCA.issue({ name: 'member', subject: '/CN=member', usage: 'serverAuth,clientAuth' });
  newLeaf = await newCA.issue({ name: 'member', subject: '/CN=member', usage: 'serverAuth,clientAuth' });
});
afterAll(() => {
  oldCA?.remove();
  newCA?.remove();
});

const pem = (leaf: Leaf): string => readFileSync(leaf.ca, 'utf8');
/** A Secret of `leaf` whose ca.crt is `ca`. */
const withCA = (name: string, leaf: Leaf, ca: string): V1Secret => {
  const s = tlsSecret(name, leaf);
  return { ...s, data: { ...s.data, 'ca.crt': Buffer.from(ca).toString('base64') } };
};

describe('the CA digest', () => {
  it('changes with the CAs, not with how the bundle is written', () => {
    const a = trustDigest({ client: pem(oldLeaf), peer: pem(oldLeaf) });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(trustDigest({ client: pem(oldLeaf).replace(/\n/g, '\r\n'), peer: pem(oldLeaf) })).toBe(a);
    const bundle = trustDigest({ client: pem(oldLeaf) + pem(newLeaf), peer: pem(oldLeaf) + pem(newLeaf) });
    expect(bundle).not.toBe(a);
    expect(trustDigest({ client: pem(newLeaf) + pem(oldLeaf), peer: pem(oldLeaf) + pem(newLeaf) })).toBe(bundle);
    expect(trustDigest({ client: pem(newLeaf), peer: pem(newLeaf) })).not.toBe(bundle);
    // Which plane trusts what counts: the peer CA alone changed is another digest.
    expect(trustDigest({ client: pem(oldLeaf), peer: pem(newLeaf) })).not.toBe(a);
    expect(bundleFingerprints(pem(oldLeaf) + pem(newLeaf))).toHaveLength(2);
  });

  it('gives none for a bundle with no certificate that parses, or no TLS at all', () => {
    expect(trustDigest({ client: 'not a certificate' })).toBeNull();
    expect(trustDigest({ client: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' })).toBeNull();
    expect(trustDigest({})).toBeNull();
  });
});

const cluster = (tls = true): EtcdCluster =>
  ({
    metadata: { name: 'demo', namespace: 'ns', uid: 'u1' },
    spec: tls
      ? {
          tls: {
            client: { secretRef: { name: 'client' }, operatorSecretRef: { name: 'op' } },
            peer: { secretRef: { name: 'peer' } },
          },
        }
      : {},
  }) as unknown as EtcdCluster;

/** A reader over Secrets the test swaps, counting the gets. */
function store(secrets: Record<string, V1Secret | null>) {
  let clock = Date.now();
  let failing = false;
  const reads: string[] = [];
  const trust = new ClusterTrust(
    (ns, name) => {
      reads.push(`${ns}/${name}`);
      return failing ? Promise.reject(new Error('connection refused')) : Promise.resolve(secrets[name] ?? null);
    },
    { now: () => clock },
  );
  return {
    trust,
    reads,
    set: (name: string, s: V1Secret | null) => (secrets[name] = s),
    fail: (f: boolean) => (failing = f),
    pass: (ms: number) => (clock += ms),
  };
}

describe("the manager's reading of a cluster's CAs", () => {
  it('reads the client and peer Secrets by name at most once a minute, and sees a CA written over them', async () => {
    const s = store({ client: tlsSecret('client', oldLeaf), peer: tlsSecret('peer', oldLeaf) });
    const first = await s.trust.refresh(cluster());
    expect(first).toBe(trustDigest({ client: pem(oldLeaf), peer: pem(oldLeaf) }));
    expect(s.reads.sort()).toEqual(['ns/client', 'ns/peer']);
    // The bundle of old and new CAs written, as docs/security.md says: seen after the minute.
    const both = pem(oldLeaf) + pem(newLeaf);
    s.set('client', withCA('client', oldLeaf, both));
    s.set('peer', withCA('peer', oldLeaf, both));
    s.pass(30_000);
    expect(await s.trust.refresh(cluster())).toBe(first);
    expect(s.reads).toHaveLength(2);
    s.pass(31_000);
    expect(await s.trust.refresh(cluster())).toBe(trustDigest({ client: both, peer: both }));
  });

  it('keeps the digest it knew while a Secret is away or the API server does not answer, and reads again sooner', async () => {
    const s = store({ client: tlsSecret('client', oldLeaf), peer: tlsSecret('peer', oldLeaf) });
    const known = await s.trust.refresh(cluster());
    s.set('peer', null);
    s.pass(61_000);
    expect(await s.trust.refresh(cluster())).toBe(known);
    s.fail(true);
    s.pass(61_000);
    expect(await s.trust.refresh(cluster())).toBe(known);
  });

  it('knows none until both Secrets are there (cert-manager issuing them), asking again after 5 s', async () => {
    const s = store({ client: tlsSecret('client', oldLeaf), peer: null });
    expect(await s.trust.refresh(cluster())).toBeUndefined();
    s.set('peer', tlsSecret('peer', oldLeaf));
    s.pass(1_000);
    expect(await s.trust.refresh(cluster())).toBeUndefined();
    s.pass(5_000);
    expect(await s.trust.refresh(cluster())).toBe(trustDigest({ client: pem(oldLeaf), peer: pem(oldLeaf) }));
  });

  it('reads nothing for a cluster without TLS', async () => {
    const s = store({});
    expect(await s.trust.refresh(cluster(false))).toBeUndefined();
    expect(s.reads).toEqual([]);
  });
});
