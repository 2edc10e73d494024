/** The control plane's certificates and service-account key, made once per dir with openssl. */
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { run } from './tools.ts';

/** Paths of every file in dir/pki that the control plane uses. */
export interface Pki {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly apiserverCert: string;
  readonly apiserverKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly kcmCert: string;
  readonly kcmKey: string;
  readonly kcmServingCert: string;
  readonly kcmServingKey: string;
  readonly schedulerCert: string;
  readonly schedulerKey: string;
  readonly schedulerServingCert: string;
  readonly schedulerServingKey: string;
  readonly kubeletClientCert: string;
  readonly kubeletClientKey: string;
  readonly frontProxyClientCert: string;
  readonly frontProxyClientKey: string;
  /** Service-account token signing key (RSA) and its public half. */
  readonly saKey: string;
  readonly saPub: string;
}

/** What a leaf certificate says: subject, use and the names it is valid for. */
export interface CertRequest {
  readonly name: string;
  readonly subject: string;
  /** Extended key usage; etcd members need both (they serve, and dial peers and themselves). */
  readonly usage: 'serverAuth' | 'clientAuth' | 'serverAuth,clientAuth';
  readonly sans?: readonly string[];
}

/** The names the API server answers to: loopback and the `kubernetes` Service's names and ClusterIP. */
export function apiserverSans(kubernetesServiceIP: string): string[] {
  const svc = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'];
  return ['IP:127.0.0.1', `IP:${kubernetesServiceIP}`, 'DNS:localhost', ...svc.map((n) => `DNS:${n}`)];
}

/** Creates what is missing in dir/pki and returns the paths; existing files are reused as they are. */
export async function ensurePki(dir: string, kubernetesServiceIP: string): Promise<Pki> {
  const pki = path.join(dir, 'pki');
  await mkdir(pki, { recursive: true, mode: 0o700 });
  const f = (n: string): string => path.join(pki, n);
  // A new CA invalidates every leaf, so the leaves are made again with it.
  if (!existsSync(f('ca.crt')) || !existsSync(f('ca.key'))) {
    await Promise.all(
      [
        'apiserver',
        'admin',
        'kcm',
        'kcm-serving',
        'scheduler',
        'scheduler-serving',
        'kubelet-client',
        'front-proxy-client',
      ].map((n) => rm(f(`${n}.crt`), { force: true })),
    );
    await makeCa(pki);
  }
  const leaves: CertRequest[] = [
    { name: 'apiserver', subject: '/CN=kube-apiserver', usage: 'serverAuth', sans: apiserverSans(kubernetesServiceIP) },
    { name: 'admin', subject: '/O=system:masters/CN=kubernetes-admin', usage: 'clientAuth' },
    { name: 'kcm', subject: '/CN=system:kube-controller-manager', usage: 'clientAuth' },
    {
      name: 'kcm-serving',
      subject: '/CN=kube-controller-manager',
      usage: 'serverAuth',
      sans: ['IP:127.0.0.1', 'DNS:localhost'],
    },
    { name: 'scheduler', subject: '/CN=system:kube-scheduler', usage: 'clientAuth' },
    {
      name: 'scheduler-serving',
      subject: '/CN=kube-scheduler',
      usage: 'serverAuth',
      sans: ['IP:127.0.0.1', 'DNS:localhost'],
    },
    { name: 'kubelet-client', subject: '/O=system:masters/CN=kube-apiserver-kubelet-client', usage: 'clientAuth' },
    { name: 'front-proxy-client', subject: '/CN=front-proxy-client', usage: 'clientAuth' },
  ];
  await Promise.all(leaves.filter((req) => !existsSync(f(`${req.name}.crt`))).map((req) => issueCert(pki, req)));
  if (!existsSync(f('sa.key')) || !existsSync(f('sa.pub'))) await makeServiceAccountKey(pki);
  return {
    dir: pki,
    caCert: f('ca.crt'),
    caKey: f('ca.key'),
    apiserverCert: f('apiserver.crt'),
    apiserverKey: f('apiserver.key'),
    adminCert: f('admin.crt'),
    adminKey: f('admin.key'),
    kcmCert: f('kcm.crt'),
    kcmKey: f('kcm.key'),
    kcmServingCert: f('kcm-serving.crt'),
    kcmServingKey: f('kcm-serving.key'),
    schedulerCert: f('scheduler.crt'),
    schedulerKey: f('scheduler.key'),
    schedulerServingCert: f('scheduler-serving.crt'),
    schedulerServingKey: f('scheduler-serving.key'),
    kubeletClientCert: f('kubelet-client.crt'),
    kubeletClientKey: f('kubelet-client.key'),
    frontProxyClientCert: f('front-proxy-client.crt'),
    frontProxyClientKey: f('front-proxy-client.key'),
    saKey: f('sa.key'),
    saPub: f('sa.pub'),
  };
}

/** Signs a new leaf certificate with the CA in pkiDir into `<name>.crt` and `<name>.key` (EC P-256, 10 years). */
export async function issueCert(pkiDir: string, req: CertRequest): Promise<void> {
  const ext = [
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${req.usage}`,
    ...(req.sans?.length ? [`subjectAltName=${req.sans.join(',')}`] : []),
  ];
  const ca = ['-CA', path.join(pkiDir, 'ca.crt'), '-CAkey', path.join(pkiDir, 'ca.key')];
  await selfOrSigned(pkiDir, req.name, req.subject, ext, ca);
}

/** Makes a self-signed CA in pkiDir (`ca.crt`, `ca.key`). */
export async function makeCa(pkiDir: string): Promise<void> {
  const ext = ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature'];
  await selfOrSigned(pkiDir, 'ca', '/CN=etcd-operator-local-ca', ext, []);
}

// Writes key and certificate under temporary names, then renames: a run killed halfway
// leaves no half-made pair that the next start would trust.
async function selfOrSigned(pkiDir: string, name: string, subject: string, ext: string[], ca: string[]): Promise<void> {
  const cnf = await minimalConfig(pkiDir);
  const key = path.join(pkiDir, `${name}.key.tmp`);
  const crt = path.join(pkiDir, `${name}.crt.tmp`);
  await run('openssl', [
    'req',
    '-config',
    cnf,
    '-x509',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    key,
    '-out',
    crt,
    '-days',
    '3650',
    '-subj',
    subject,
    ...ca,
    ...ext.flatMap((e) => ['-addext', e]),
  ]);
  await rename(key, path.join(pkiDir, `${name}.key`));
  await rename(crt, path.join(pkiDir, `${name}.crt`));
}

async function makeServiceAccountKey(pkiDir: string): Promise<void> {
  const key = path.join(pkiDir, 'sa.key.tmp');
  await run('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key]);
  await run('openssl', ['pkey', '-in', key, '-pubout', '-out', path.join(pkiDir, 'sa.pub')]);
  await rename(key, path.join(pkiDir, 'sa.key'));
}

// The machine's openssl.cnf may add its own extensions (CA:TRUE on every -x509); this one adds none.
async function minimalConfig(pkiDir: string): Promise<string> {
  const cnf = path.join(pkiDir, 'openssl.cnf');
  if (!existsSync(cnf)) await writeFile(cnf, '[req]\ndistinguished_name = dn\n[dn]\n');
  return cnf;
}
