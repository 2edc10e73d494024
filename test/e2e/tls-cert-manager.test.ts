/**
 * TLS from cert-manager and etcd auth on the local cluster with the manager, as a user sets it up:
 * a self-signed ClusterIssuer makes a CA, a CA Issuer signs with it, and a 3-member cluster names
 * that Issuer for client and peer TLS with spec.auth.enabled. The operator makes the Certificates
 * (its own with the common name root) and turns auth on. etcdctl with a user certificate of the
 * common name root reads and writes; one of the common name nobody gets permission denied; one
 * without a certificate is refused. Then cert-manager renews every certificate while a writer
 * puts keys through the client Service: no write fails, and the members serve the new
 * certificates afterwards, without a restart.
 */
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import type { EtcdClientTLS } from '../../effects/etcd/index.ts';
import { useCertManager, type CertManagerInUse } from './cert-manager-fixture.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { etcdctl, servedSerial, serialOf } from './tls-cluster.ts';
import { applyManifest, getJson, kubectl } from './kube.ts';
import { withManager } from './manager-fixture.ts';
import { Traffic } from './traffic.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('tls-cm');
const { ns, kube } = env;
const clusterIssuer = `selfsigned-${ns}`;
const issuerRef = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' };
/** The Certificates the operator makes for cluster demo, each writing the Secret of its name. */
const ISSUED = ['demo-client-tls', 'demo-peer-tls', 'demo-operator-tls'];
const KEYS = 20;

let certManager: CertManagerInUse;
/** How often the manager reads a cluster's Secrets again (--secret-read-interval; a minute by default), seconds. */
const SECRET_READ_S = 5;
let demo: ClusterUnderTest;
/** User certificates issued in the test by the same CA Issuer, as files for etcdctl and as PEM. */
let root: { files: Record<'ca' | 'cert' | 'key', string>; tls: EtcdClientTLS };
let nobody: { files: Record<'ca' | 'cert' | 'key', string>; tls: EtcdClientTLS };

interface Certificate {
  metadata: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
  spec: { commonName?: string; dnsNames?: string[]; ipAddresses?: string[]; usages?: string[] };
  status?: { revision?: number; conditions?: { type: string; status: string }[] };
}
interface Secret {
  data?: Record<string, string>;
}

/** Waits until a Certificate is Ready at `revision` (1 for the first issuance), saying why not. */
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

/** Asks cert-manager to renew a Certificate now, as `cmctl renew` does: the Issuing condition. */
async function renew(name: string): Promise<void> {
  const issuing = {
    type: 'Issuing',
    status: 'True',
    reason: 'ManuallyTriggered',
    message: 'renewal asked by the test',
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
  const patch = JSON.stringify([{ op: 'add', path: '/status/conditions/-', value: issuing }]);
  await kubectl(['patch', 'certificate', name, '-n', ns, '--subresource=status', '--type=json', '-p', patch], {
    check: true,
  });
}

/** A TLS Secret's three keys, decoded. */
async function secretPEM(name: string): Promise<{ ca: Buffer; cert: Buffer; key: Buffer }> {
  const secret = await getJson<Secret>(['secret', name, '-n', ns]);
  const get = (key: string): Buffer => Buffer.from(secret.data?.[key] ?? '', 'base64');
  return { ca: get('ca.crt'), cert: get('tls.crt'), key: get('tls.key') };
}

/** A user certificate from the CA Issuer: its Secret as files for etcdctl, and as PEM for etcd3. */
async function userCertificate(name: string, commonName: string) {
  await applyManifest(`
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: { name: ${name}, namespace: ${ns} }
spec:
  secretName: ${name}
  commonName: ${commonName}
  usages: [client auth]
  privateKey: { algorithm: ECDSA, size: 256 }
  issuerRef: { name: ca, kind: Issuer }
`);
  await issued(name, 1);
  const tls = await secretPEM(name);
  const files = {
    ca: path.join(env.dir, `${name}-ca.crt`),
    cert: path.join(env.dir, `${name}.crt`),
    key: path.join(env.dir, `${name}.key`),
  };
  writeFileSync(files.ca, tls.ca);
  writeFileSync(files.cert, tls.cert);
  writeFileSync(files.key, tls.key, { mode: 0o600 });
  return { files, tls };
}

/** `--cacert --cert --key` of a user certificate; the server check skipped (it does not cover Pod IPs). */
const certArgs = (u: { files: Record<'ca' | 'cert' | 'key', string> }): string[] => [
  `--cacert=${u.files.ca}`,
  `--cert=${u.files.cert}`,
  `--key=${u.files.key}`,
  '--insecure-skip-tls-verify',
];

/** The Pod IPs of the cluster's members, by member name. */
async function podIPs(): Promise<Map<string, string>> {
  const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' });
  return new Map(pods.items.map((p) => [p.metadata?.name ?? '', p.status?.podIP ?? '']));
}

/** The serial of the certificate in a Secret. */
const secretSerial = async (name: string): Promise<string> => serialOf((await secretPEM(name)).cert);

/**
 * What a stuck bring-up shows: the cluster's conditions, the Certificates' conditions, which
 * Secrets exist (names only), the Pods' phases and the namespace's warning Events, and the
 * manager's warnings and last lines.
 */
async function diagnose(): Promise<string> {
  const out: string[] = [];
  const get = async (args: string[]): Promise<string> => (await kubectl(['-n', ns, ...args])).stdout.trim();
  out.push(`cluster conditions: ${JSON.stringify((await demo.get()).status?.conditions ?? [])}`);
  out.push(
    `certificates:\n${await get(['get', 'certificates', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions}{"\\n"}{end}'])}`,
  );
  out.push(`secrets: ${await get(['get', 'secrets', '-o', 'jsonpath={.items[*].metadata.name}'])}`);
  out.push(`pods:\n${await get(['get', 'pods', '-o', 'wide'])}`);
  out.push(`cluster status: ${JSON.stringify({ ...(await demo.get()).status, conditions: undefined })}`);
  for (const pod of (await get(['get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}'])).split(' ').filter(Boolean))
    out.push(`${pod} log:\n${await get(['logs', pod, '--tail=25'])}`);
  const metrics = await fetch(`http://127.0.0.1:${env.manager.port}/metrics`).then((r) => r.text(), String);
  out.push(
    `manager probes:\n${metrics
      .split('\n')
      .filter((l) => /probe|step|queue/.test(l) && !l.startsWith('#'))
      .slice(0, 30)
      .join('\n')}`,
  );
  out.push(`events:\n${await get(['get', 'events', '--sort-by=.lastTimestamp'])}`);
  const lines = env.manager.lines.map((l) => JSON.stringify(l));
  out.push(
    `manager warnings:\n${env.manager.lines
      .filter((l) => l.level >= 40)
      .slice(-40)
      .map((l) => JSON.stringify(l))
      .join('\n')}`,
  );
  out.push(`manager last lines:\n${lines.slice(-40).join('\n')}`);
  out.push(`cert-manager last lines:\n${(await certManager.lastLines()).join('\n')}`);
  return out.join('\n');
}

describe.skipIf(!hasNode)('TLS from cert-manager, with etcd auth', () => {
  env.hooks({ args: ['--secret-read-interval', String(SECRET_READ_S)] });
  beforeAll(async () => {
    certManager = await useCertManager();
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
    root = await userCertificate('user-root', 'root');
    nobody = await userCertificate('user-nobody', 'nobody');
    // The test's own calls go as root: with auth on, etcd takes the user from the common name.
    demo = new ClusterUnderTest(kube, ns, 'demo', {
      client: root.tls,
      serverName: `demo-client.${ns}.svc`,
      peer: true,
    });
    const spec: Partial<EtcdCluster['spec']> = {
      replicas: 3,
      tls: { client: { issuerRef }, peer: { issuerRef } },
      auth: { enabled: true },
    };
    await demo.create(spec);
    try {
      await demo.settled(3, 240_000);
    } catch (err) {
      console.log(await diagnose());
      throw err;
    }
  });
  afterAll(async () => {
    await kubectl(['delete', 'clusterissuer', clusterIssuer, '--ignore-not-found']);
    await certManager?.stop();
  });

  it('the operator made the Certificates, owned by the cluster, with the names etcd needs; its own is CN=root', async () => {
    for (const name of ISSUED) {
      const c = await getJson<Certificate>(['certificate', name, '-n', ns]);
      expect(c.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'EtcdCluster', name: 'demo', controller: true }),
      ]);
      expect(c.status?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');
    }
    const client = new X509Certificate((await secretPEM('demo-client-tls')).cert);
    // checkHost answers with the name of the certificate that matched: a wildcard for members.
    const covers: Record<string, string> = {
      [`demo-2.demo.${ns}.svc`]: `*.demo.${ns}.svc`,
      [`demo-9.demo.${ns}.svc.cluster.local`]: `*.demo.${ns}.svc.cluster.local`,
      [`demo-client.${ns}.svc`]: `demo-client.${ns}.svc`,
      localhost: 'localhost',
    };
    for (const [host, name] of Object.entries(covers)) expect(client.checkHost(host), host).toBe(name);
    expect(client.checkIP('127.0.0.1')).toBe('127.0.0.1');
    const operator = new X509Certificate((await secretPEM('demo-operator-tls')).cert);
    expect(operator.subject).toBe('CN=root');
    const status = (await demo.get()).status;
    expect(status?.conditions?.find((c) => c.type === 'AuthEnabled')).toMatchObject({ status: 'True' });
  });

  it('3 members over TLS with auth on; the keys the root user writes read back', async () => {
    await demo.verify(3);
    const etcd = await demo.client();
    try {
      expect((await etcd.auth.authStatus()).enabled).toBe(true);
      expect((await etcd.auth.userGet({ name: 'root' })).roles).toEqual(['root']);
    } finally {
      etcd.close();
    }
    await demo.write('as-root', KEYS);
    expect(await demo.readBack('as-root', KEYS)).toBe(KEYS);
  });

  it('etcdctl: CN=root reads and writes; CN=nobody gets permission denied; no certificate is refused', async () => {
    const endpoint = `https://${(await podIPs()).get('demo-1')}:2379`;
    const put = await etcdctl(endpoint, [...certArgs(root), 'put', 'from-etcdctl', 'yes']);
    expect(put.out).toContain('OK');
    const get = await etcdctl(endpoint, [...certArgs(root), 'get', '--print-value-only', 'from-etcdctl']);
    expect(get.out.trim()).toBe('yes');
    const denied = await etcdctl(endpoint, [...certArgs(nobody), 'get', 'from-etcdctl']);
    expect(denied.ok, denied.out).toBe(false);
    expect(denied.out).toContain('permission denied');
    const deniedPut = await etcdctl(endpoint, [...certArgs(nobody), 'put', 'from-nobody', 'no']);
    expect(deniedPut.ok, deniedPut.out).toBe(false);
    expect(deniedPut.out).toContain('permission denied');
    const anonymous = await etcdctl(endpoint, ['--insecure-skip-tls-verify', 'get', 'from-etcdctl']);
    expect(anonymous.ok, anonymous.out).toBe(false);
    expect(anonymous.out).toMatch(/certificate required|bad certificate|handshake|deadline exceeded/i);
  });

  it(
    'every certificate renewed under a writer: no failed write, and the members serve the new certificates without a restart',
    { timeout: 600_000 },
    async () => {
      const before = new Map<string, string>();
      for (const name of ISSUED) before.set(name, await secretSerial(name));
      const restarts = async (): Promise<number> =>
        (await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' })).items
          .flatMap((p) => p.status?.containerStatuses ?? [])
          .reduce((n, c) => n + c.restartCount, 0);
      const podUIDs = async (): Promise<string[]> =>
        (await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd-operator.dev/cluster=demo' })).items
          .map((p) => p.metadata?.uid ?? '')
          .sort();
      const [restartsBefore, podsBefore] = [await restarts(), await podUIDs()];
      const traffic = new Traffic('renewal');
      await traffic.start(kube.core, ns, 'demo', { client: root.tls, serverName: `demo-client.${ns}.svc` });
      const started = Date.now();
      let failure: unknown;
      try {
        for (const name of ISSUED) await renew(name);
        for (const name of ISSUED) await issued(name, 2);
        const after = new Map<string, string>();
        for (const name of ISSUED) after.set(name, await secretSerial(name));
        for (const name of ISSUED) expect(after.get(name), name).not.toBe(before.get(name));
        // The kubelet brings the files up to date in place; etcd reads them at the next handshake.
        await until(
          'every member serves the renewed client and peer certificates',
          async () => {
            for (const ip of (await podIPs()).values()) {
              if ((await servedSerial(ip, 2379, root.tls)) !== after.get('demo-client-tls')) return undefined;
              if ((await servedSerial(ip, 2380, root.tls)) !== after.get('demo-peer-tls')) return undefined;
            }
            return true;
          },
          120_000,
        );
        // A while longer under traffic, past the operator's next read of its own renewed Secret.
        await new Promise((r) => setTimeout(r, (SECRET_READ_S + 5) * 1000));
        await demo.settled(3, 60_000);
      } catch (err) {
        failure = err;
      }
      const report = await traffic.stop();
      console.log(
        `renewal of ${ISSUED.length} certificates under traffic: ${Date.now() - started} ms; ${report.acknowledged} writes, ` +
          `${report.failed.length} failed, longest write ${report.longestStallMs} ms, ` +
          `${report.unwatched.length} revisions unwatched, ${report.lost.length} keys lost, ${report.watchErrors} watch errors`,
      );
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
      expect(report.failed).toEqual([]);
      expect(report.unwatched).toEqual([]);
      expect(report.lost).toEqual([]);
      expect(report.acknowledged).toBeGreaterThan(20);
      // No restart: the same Pods, their etcd containers never restarted.
      expect(await podUIDs()).toEqual(podsBefore);
      expect(await restarts()).toBe(restartsBefore);
      // The operator still calls etcd (now with its renewed certificate): it lists members and writes status.
      await demo.verify(3);
      expect(await demo.readBack('as-root', KEYS)).toBe(KEYS);
    },
  );

  it('no certificate or key in the manager’s log, the namespace’s Events or the cluster’s status', async () => {
    const log = env.manager.lines.map((l) => JSON.stringify(l)).join('\n');
    const events = (await kubectl(['get', 'events', '-n', ns, '-o', 'json'], { check: true })).stdout;
    const status = JSON.stringify((await demo.get()).status);
    for (const [where, text] of Object.entries({ log, events, status })) {
      expect(text, where).not.toContain('BEGIN');
      expect(text, where).not.toContain('PRIVATE KEY');
    }
    expect(events).toContain('demo');
  });
});
