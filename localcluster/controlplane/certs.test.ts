import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePki } from './certs.ts';
import type { Pki } from './certs.ts';
import { run } from './tools.ts';

let dir: string;
let pki: Pki;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'controlplane-certs-'));
  pki = await ensurePki(dir, '127.96.0.1');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const text = (cert: string): Promise<string> => run('openssl', ['x509', '-in', cert, '-noout', '-text']);

describe('control-plane certificates', () => {
  it('signs every certificate with the one CA', async () => {
    const leaves = [
      pki.apiserverCert,
      pki.adminCert,
      pki.kcmCert,
      pki.kcmServingCert,
      pki.kubeletClientCert,
      pki.frontProxyClientCert,
    ];
    const out = await run('openssl', ['verify', '-CAfile', pki.caCert, ...leaves]);
    expect(out.trim().split('\n')).toEqual(leaves.map((l) => `${l}: OK`));
  });

  it('makes the API server certificate valid for loopback and the kubernetes Service names', async () => {
    const cert = await text(pki.apiserverCert);
    for (const name of [
      'IP Address:127.0.0.1',
      'IP Address:127.96.0.1',
      'DNS:localhost',
      'DNS:kubernetes.default.svc.cluster.local',
    ]) {
      expect(cert).toContain(name);
    }
    expect(cert).toContain('TLS Web Server Authentication');
    expect(cert).toContain('CA:FALSE');
  });

  it('puts the admin in system:masters, for client authentication only', async () => {
    const cert = await text(pki.adminCert);
    expect(cert).toMatch(/Subject: O ?= ?system:masters, CN ?= ?kubernetes-admin/);
    expect(cert).toContain('TLS Web Client Authentication');
    expect(cert).not.toContain('TLS Web Server Authentication');
  });

  it('reuses what a dir already has instead of making new certificates', async () => {
    const before = await Promise.all([pki.caCert, pki.apiserverCert, pki.saKey].map((f) => readFile(f, 'utf8')));
    const again = await ensurePki(dir, '127.96.0.1');
    const after = await Promise.all([again.caCert, again.apiserverCert, again.saKey].map((f) => readFile(f, 'utf8')));
    expect(after).toEqual(before);
  });
});
