import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { Journal } from '../../journal/journal.ts';
import { REDACTED, redact, redactText } from '../../journal/redact.ts';
import { demo, step, tempDb } from './helpers.ts';

// Each secret is a distinct marker, so a hit in the file's bytes names the path that leaked.
const S = {
  password: 'pw-7f3a9c1e',
  token: 'tok-51c0ffee',
  privateKey: 'pk-0d15ea5e',
  secretData: 'c2VjcmV0LWRhdGEtYjE2Yg==',
  stringData: 'sd-8badf00d',
  authHeader: 'ah-feedface',
  pem: 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
  envValue: 'env-deadbeef',
  resultSecret: 'rs-cafebabe',
  message: 'msg-abad1dea',
  accessKey: 'ak-12345678',
};
const pemBlock = `-----BEGIN PRIVATE KEY-----\n${S.pem}\n-----END PRIVATE KEY-----`;

function fileBytes(path: string): string {
  return [path, `${path}-wal`]
    .filter(existsSync)
    .map((p) => readFileSync(p).toString('latin1'))
    .join('');
}

describe('journal: redaction', () => {
  test('secrets in events, outcome results and error messages never reach the database file', () => {
    const path = tempDb();
    const j = Journal.open(path);
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'demo-tls' },
      data: { 'tls.key': S.secretData },
      stringData: { any: S.stringData },
    };
    const { intentIds } = j.recordStep(demo, {
      machine: 'cluster',
      event: {
        type: 'k8s.secret.updated',
        at: new Date(),
        object: secret,
        headers: { Authorization: `Bearer ${S.authHeader}` },
        env: [{ name: 'ETCD_ROOT_PASSWORD', value: S.envValue }],
        auth: { rootPassword: S.password, token: S.token, tls: { privateKey: pemBlock } },
      },
      from: 'Pending',
      to: 'Bootstrapping',
      state: { value: 'Bootstrapping', context: { tlsSecretName: 'demo-tls' } },
      intents: [
        {
          type: 'createPod',
          params: {
            member: 'demo-0',
            volumes: [{ name: 'tls', secret: { secretName: 'demo-tls' } }],
            automountServiceAccountToken: false,
          },
        },
      ],
    });
    j.recordOutcome(demo, intentIds[0] ?? '', {
      ok: true,
      result: { s3: { secretAccessKey: S.accessKey }, ETag: 'e1' },
    });
    j.recordStep(demo, {
      ...step('Bootstrapping', 'Bootstrapping', [{ type: 'createService' }]),
      event: { type: 'k8s.cluster.updated', at: new Date() },
    });
    j.recordOutcome(demo, `${demo.uid}:2:0`, {
      ok: false,
      code: 'ERR_CREATE_SERVICE',
      message: `denied for Bearer ${S.message}; key ${pemBlock}`,
    });
    const bytesWhileOpen = fileBytes(path);
    const rows = j.timeline({ uid: demo.uid });
    j.close();
    const bytesAfterClose = fileBytes(path);

    for (const [name, value] of Object.entries(S).filter(([n]) => n !== 'resultSecret')) {
      expect(bytesWhileOpen.includes(value), `${name} in the open file`).toBe(false);
      expect(bytesAfterClose.includes(value), `${name} in the closed file`).toBe(false);
    }
    // What is not secret is still there to read.
    for (const kept of ['demo-tls', 'ETCD_ROOT_PASSWORD', 'automountServiceAccountToken', 'ETag'])
      expect(bytesAfterClose).toContain(kept);
    const event = rows.find((r) => r.entry === 'event');
    expect(event?.data).toMatchObject({
      env: [{ name: 'ETCD_ROOT_PASSWORD', value: REDACTED }],
      auth: { rootPassword: REDACTED, token: REDACTED },
    });
    expect(rows.find((r) => r.entry === 'outcome' && !r.ok)?.message).toBe(
      `denied for Bearer ${REDACTED}; key ${REDACTED}`,
    );
  });

  test('a step whose intent params or machine state hold a secret is refused, and the secret is not written', () => {
    const path = tempDb();
    const j = Journal.open(path);
    const withParams = step('Pending', 'Bootstrapping', [
      { type: 'createPod', params: { member: 'demo-0', env: [{ name: 'ROOT_PASSWORD', value: S.resultSecret }] } },
    ]);
    expect(() => j.recordStep(demo, withParams)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_SECRET' }));
    expect(() => j.recordStep(demo, withParams)).toThrow(
      'intent createPod of step 1 of EtcdCluster/demo holds secret-looking values at env[0].value',
    );
    const withState = {
      ...step('Pending', 'Bootstrapping'),
      state: { context: { auth: { rootPassword: S.resultSecret } } },
    };
    expect(() => j.recordStep(demo, withState)).toThrow(expect.objectContaining({ code: 'ERR_JOURNAL_SECRET' }));
    expect(() => j.recordStep(demo, withState)).toThrow(
      'machine state after step 1 of EtcdCluster/demo holds secret-looking values at context.auth.rootPassword',
    );
    expect(j.objects()).toEqual([]);
    j.close();
    expect(fileBytes(path).includes(S.resultSecret)).toBe(false);
  });

  test('TLS: references to the Secrets stay readable; certificates and keys never reach the database file', () => {
    const path = tempDb();
    const j = Journal.open(path);
    const M = { key: 'tlskey-5eed1e55', cert: 'tlscrt-0b5e55ed', ca: 'cacrt-d15ea5ed', secret: 'dGxzLWtleS1kYXRh' };
    const pem = (kind: string, body: string): string => `-----BEGIN ${kind}-----\n${body}\n-----END ${kind}-----`;
    const tls = {
      client: { secretRef: { name: 'demo-client-tls' }, operatorSecretRef: { name: 'demo-operator-tls' } },
      peer: { secretRef: { name: 'demo-peer-tls' } },
    };
    const { intentIds } = j.recordStep(demo, {
      machine: 'cluster',
      event: {
        type: 'k8s.cluster.updated',
        at: new Date(),
        spec: { replicas: 3, tls },
        // Whatever a future event might carry by mistake: the operator's credentials, the Secret read.
        operatorTLS: { ca: Buffer.from(M.ca), cert: Buffer.from(M.cert), key: Buffer.from(M.key) },
        client: { ca: pem('CERTIFICATE', M.ca), cert: pem('CERTIFICATE', M.cert), key: pem('PRIVATE KEY', M.key) },
        secret: { kind: 'Secret', metadata: { name: 'demo-operator-tls' }, data: { 'tls.key': M.secret } },
      },
      from: 'Pending',
      to: 'Bootstrapping',
      state: {
        value: 'Bootstrapping',
        context: { cluster: { namespace: 'ns', name: 'demo', uid: 'u', peerTLS: true } },
      },
      intents: [{ type: 'addLearner', params: { member: 'demo-1', peerURL: 'https://demo-1.demo.ns.svc:2380' } }],
    });
    const problem = 'Secret ns/demo-peer-tls (spec.tls.peer.secretRef) has no tls.key, ca.crt';
    j.recordOutcome(demo, intentIds[0] ?? '', {
      ok: false,
      code: 'ERR_TLS_SECRET',
      message: `member demo-1 cannot be started: ${problem}; got ${pem('EC PRIVATE KEY', M.key)}`,
    });
    const rows = j.timeline({ uid: demo.uid });
    j.close();
    const bytes = fileBytes(path);
    for (const [name, value] of Object.entries(M)) expect(bytes.includes(value), `${name} in the file`).toBe(false);
    for (const kept of ['demo-client-tls', 'demo-operator-tls', 'demo-peer-tls', 'https://demo-1.demo.ns.svc:2380'])
      expect(bytes).toContain(kept);
    expect(rows.find((r) => r.entry === 'event')?.data).toMatchObject({
      spec: { tls },
      operatorTLS: { ca: REDACTED, cert: REDACTED, key: REDACTED },
      client: { ca: REDACTED, cert: REDACTED, key: REDACTED },
      secret: { data: REDACTED },
    });
    expect(rows.find((r) => r.entry === 'outcome')?.message).toBe(
      `member demo-1 cannot be started: ${problem}; got ${REDACTED}`,
    );
  });

  test('cert-manager and auth: issuers, Certificates, the auth steps and their context are journaled as they are; a PEM in a message is not', () => {
    const path = tempDb();
    const j = Journal.open(path);
    const body = 'MIIBkTCB+wIJAKHHIG1c3rt';
    const issuerRef = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' };
    const tls = { client: { issuerRef }, peer: { issuerRef: { name: 'root-ca', kind: 'ClusterIssuer' } } };
    const context = { certificatesWanted: true, authWanted: true, authEnabled: true };
    // None of these fields looks secret to the journal, which refuses a step that holds one.
    const { intentIds } = j.recordStep(demo, {
      machine: 'cluster',
      event: {
        type: 'k8s.cluster.updated',
        at: new Date(),
        spec: { replicas: 3, tls, auth: { enabled: true } },
        certificates: true,
        auth: true,
      },
      from: 'Pending',
      to: 'Bootstrapping',
      state: { value: 'Bootstrapping', context },
      intents: [
        { type: 'ensureCertificates', params: { cluster: 'demo' } },
        { type: 'checkCertificates', params: { cluster: 'demo' } },
        { type: 'enableAuth', params: { cluster: 'demo' } },
      ],
    });
    const names = ['demo-client-tls', 'demo-operator-tls', 'demo-peer-tls'];
    j.recordOutcome(demo, intentIds[0] ?? '', { ok: true, result: { certificates: names } });
    const notReady = `Certificate demo-peer-tls is not Ready (Failed: the issuer returned -----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----)`;
    j.recordOutcome(demo, intentIds[1] ?? '', { ok: false, code: 'ERR_CERTIFICATES_NOT_READY', message: notReady });
    const did = ['user add root (no password)', 'role add root', 'grant the role root to root', 'auth enable'];
    j.recordOutcome(demo, intentIds[2] ?? '', { ok: true, result: { enabled: true, did } });
    const rows = j.timeline({ uid: demo.uid });
    j.close();
    const bytes = fileBytes(path);
    expect(bytes.includes(body), 'the PEM body in the file').toBe(false);
    expect(rows.find((r) => r.entry === 'event')?.data).toMatchObject({
      spec: { tls, auth: { enabled: true } },
      auth: true,
    });
    expect(rows.filter((r) => r.entry === 'outcome').map((r) => r.message ?? r.data)).toEqual([
      { certificates: names },
      `Certificate demo-peer-tls is not Ready (Failed: the issuer returned ${REDACTED})`,
      { enabled: true, did },
    ]);
  });

  test('redact hides secret fields by name and keeps references to secrets', () => {
    expect(
      redact({
        password: 'x',
        clientSecret: 'x',
        bearer_token: 'x',
        'private-key': 'x',
        'tls.key': 'x',
        'tls.crt': 'x',
        'ca.crt': 'x',
        secretName: 'demo-tls',
        secretKeyRef: { name: 'auth', key: 'password' },
        tokenTTL: 30,
        passwordless: false,
      }),
    ).toEqual({
      password: REDACTED,
      clientSecret: REDACTED,
      bearer_token: REDACTED,
      'private-key': REDACTED,
      'tls.key': REDACTED,
      'tls.crt': REDACTED,
      'ca.crt': REDACTED,
      secretName: 'demo-tls',
      secretKeyRef: { name: 'auth', key: 'password' },
      tokenTTL: 30,
      passwordless: false,
    });
  });

  test('redact hides the payload of a Secret and secret-looking text anywhere', () => {
    expect(redact({ kind: 'Secret', metadata: { name: 's' }, data: { a: 'YQ==' }, type: 'Opaque' })).toEqual({
      kind: 'Secret',
      metadata: { name: 's' },
      data: REDACTED,
      type: 'Opaque',
    });
    expect(redact(['Basic dXNlcjpwYXNz', 'plain'])).toEqual([`Basic ${REDACTED}`, 'plain']);
    expect(redactText(`cert: ${pemBlock} end`)).toBe(`cert: ${REDACTED} end`);
    const loop: Record<string, unknown> = { a: 1 };
    loop.self = loop;
    expect(redact(loop)).toEqual({ a: 1, self: '[circular]' });
  });
});
