/**
 * cert-manager on the local cluster issues what TLS for etcd will ask of it: a self-signed
 * ClusterIssuer makes a CA, an Issuer signs with that CA a leaf for the DNS names asked, and a
 * renewal (as `cmctl renew` asks for one) or a lost Secret gives a new certificate.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCertManager, type CertManagerInUse } from './cert-manager-fixture.ts';
import { until } from '../../localcluster/until.ts';
import { applyManifest, getJson, kubectl } from './kube.ts';

const ns = `cert-manager-${Date.now().toString(36)}`;
const clusterIssuer = `selfsigned-${ns}`;
const dnsNames = ['etcd-0.etcd.default.svc', 'etcd-0.etcd.default.svc.cluster.local', 'localhost'];
let certManager: CertManagerInUse;

interface Condition {
  type: string;
  status: string;
  reason?: string;
}
interface Certificate {
  status?: { revision?: number; conditions?: Condition[] };
}
interface Secret {
  metadata: { resourceVersion: string };
  data?: Record<string, string>;
}

/** The three keys of a cert-manager TLS Secret, decoded. */
async function tlsSecret(name: string): Promise<{ crt: string; key: string; ca: string; resourceVersion: string }> {
  const secret = await getJson<Secret>(['secret', name, '-n', ns]);
  const get = (key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  return {
    crt: get('tls.crt'),
    key: get('tls.key'),
    ca: get('ca.crt'),
    resourceVersion: secret.metadata.resourceVersion,
  };
}

/** Waits until the Certificate is Ready at the given revision (1 for the first issuance). */
async function issued(name: string, revision: number): Promise<void> {
  const wait = async (...args: string[]): Promise<void> => {
    const result = await kubectl(['wait', `certificate/${name}`, '-n', ns, ...args]);
    if (result.code === 0) return;
    const cert = await getJson<Certificate>(['certificate', name, '-n', ns]);
    throw new Error(
      `certificate ${name} not issued at revision ${revision}: ${result.stderr.trim()}\n` +
        `status: ${JSON.stringify(cert.status)}\ncert-manager log:\n${(await certManager.lastLines()).join('\n')}`,
    );
  };
  await wait(`--for=jsonpath={.status.revision}=${revision}`, '--timeout=90s');
  await wait('--for=condition=Ready', '--timeout=30s');
}

beforeAll(async () => {
  certManager = await useCertManager();
  await kubectl(['create', 'namespace', ns], { check: true });
});

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
  await kubectl(['delete', 'clusterissuer', clusterIssuer, '--ignore-not-found']);
  await certManager?.stop();
});

describe('cert-manager on the local cluster', () => {
  it('makes a CA from a self-signed ClusterIssuer, and a CA Issuer from it becomes Ready', async () => {
    await applyManifest(`
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: { name: ${clusterIssuer} }
spec: { selfSigned: {} }
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ca, namespace: ${ns} }
spec:
  isCA: true
  commonName: etcd-operator test CA
  secretName: ca
  duration: 87600h
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: ${clusterIssuer}, kind: ClusterIssuer, group: cert-manager.io }
---
apiVersion: cert-manager.io/v1
kind: Issuer
metadata: { name: ca, namespace: ${ns} }
spec: { ca: { secretName: ca } }
`);
    await issued('ca', 1);
    await kubectl(['wait', 'issuer/ca', '-n', ns, '--for=condition=Ready', '--timeout=60s'], { check: true });
    const ca = new X509Certificate((await tlsSecret('ca')).crt);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe('CN=etcd-operator test CA');
    expect(ca.checkIssued(ca)).toBe(true); // self-signed
  });

  it('issues a leaf for the DNS names asked, signed by the CA, with tls.crt, tls.key and ca.crt', async () => {
    await applyManifest(`
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: leaf, namespace: ${ns} }
spec:
  secretName: leaf-tls
  duration: 2160h
  dnsNames: [${dnsNames.join(', ')}]
  usages: [server auth, client auth]
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: ca, kind: Issuer }
`);
    await issued('leaf', 1);
    const secret = await tlsSecret('leaf-tls');
    const [leaf, ca] = [new X509Certificate(secret.crt), new X509Certificate(secret.ca)];
    expect(ca.fingerprint256).toBe(new X509Certificate((await tlsSecret('ca')).crt).fingerprint256);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkPrivateKey(createPrivateKey(secret.key))).toBe(true);
    const sans = (leaf.subjectAltName ?? '').split(', ').sort();
    expect(sans).toEqual(dnsNames.map((n) => `DNS:${n}`).sort());
    for (const name of dnsNames) expect(leaf.checkHost(name)).toBe(name);
  });

  it('renews on request (the Issuing condition cmctl renew sets): a new certificate and key', async () => {
    const before = await tlsSecret('leaf-tls');
    const issuing = {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'renewal asked by the test',
    };
    await kubectl(
      [
        'patch',
        'certificate',
        'leaf',
        '-n',
        ns,
        '--subresource=status',
        '--type=json',
        '-p',
        JSON.stringify([
          {
            op: 'add',
            path: '/status/conditions/-',
            value: { ...issuing, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
          },
        ]),
      ],
      { check: true },
    );
    await issued('leaf', 2);
    const after = await tlsSecret('leaf-tls');
    const [old, renewed, ca] = [
      new X509Certificate(before.crt),
      new X509Certificate(after.crt),
      new X509Certificate(after.ca),
    ];
    expect(renewed.serialNumber).not.toBe(old.serialNumber);
    // cert-manager's default rotationPolicy is Always: a new key with each certificate.
    expect(after.key).not.toBe(before.key);
    expect(renewed.verify(ca.publicKey)).toBe(true);
    expect(renewed.checkPrivateKey(createPrivateKey(after.key))).toBe(true);
  });

  it('issues again when the Secret is deleted', async () => {
    const before = await tlsSecret('leaf-tls');
    await kubectl(['delete', 'secret', 'leaf-tls', '-n', ns], { check: true });
    await issued('leaf', 3);
    const after = await until('the renewed leaf-tls Secret', async () => tlsSecret('leaf-tls'), Infinity, 250);
    expect(new X509Certificate(after.crt).serialNumber).not.toBe(new X509Certificate(before.crt).serialNumber);
    expect(new X509Certificate(after.crt).verify(new X509Certificate(after.ca).publicKey)).toBe(true);
  });
});
