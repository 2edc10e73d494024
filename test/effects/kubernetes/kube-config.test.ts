import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
// client-node's own, to show what the project's KubeConfig changes.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { CoreV1Api, KubeConfig as ClientKubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '../../../effects/kubernetes/kube-config.ts';
import { TestPki } from '../etcd/test-pki.ts';

/** An HTTPS server asking for client certificates, answering any path with an empty NamespaceList. */
interface ApiServer {
  readonly server: Server;
  readonly url: string;
  /** TLS connections accepted, and the client certificate's subject CN of each. */
  readonly handshakes: string[];
}

async function apiServer(pki: TestPki): Promise<ApiServer> {
  const leaf = await pki.issue({ name: 'server', subject: '/CN=server', usage: 'serverAuth', sans: ['IP:127.0.0.1'] });
  const handshakes: string[] = [];
  const server = createServer(
    { cert: readFileSync(leaf.cert), key: readFileSync(leaf.key), ca: readFileSync(leaf.ca), requestCert: true },
    (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items: [] }));
    },
  );
  server.on('secureConnection', (socket: TLSSocket) =>
    handshakes.push(String(socket.getPeerCertificate().subject?.CN ?? '')),
  );
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, handshakes };
}

function load(kc: ClientKubeConfig, url: string, pki: TestPki, client: string): void {
  const leaf = pki.leaf(client);
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, caFile: leaf.ca }],
    users: [{ name: 'u', certFile: leaf.cert, keyFile: leaf.key }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
}

describe('KubeConfig: API calls share kept-alive connections', () => {
  let pki: TestPki;
  let api: ApiServer;
  beforeAll(async () => {
    pki = await TestPki.create('kube-config-');
    await pki.issue({ name: 'alice', subject: '/CN=alice', usage: 'clientAuth' });
    api = await apiServer(pki);
  });
  afterAll(() => {
    api.server.closeAllConnections();
    api.server.close();
    pki.remove();
  });

  it("client-node's own opens a TLS connection per call (why the project has its own)", async () => {
    api.handshakes.length = 0;
    const kc = new ClientKubeConfig();
    load(kc, api.url, pki, 'alice');
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 10; i++) await core.listNamespace();
    expect(api.handshakes).toHaveLength(10);
  });

  it("the project's: calls one after another and at once share the connections of one Agent", async () => {
    api.handshakes.length = 0;
    const kc = new KubeConfig();
    load(kc, api.url, pki, 'alice');
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 10; i++) await core.listNamespace();
    // A call may be sent before the last one's connection is back in the pool: two at most.
    expect(api.handshakes.length).toBeGreaterThanOrEqual(1);
    expect(api.handshakes.length).toBeLessThanOrEqual(2);
    const sequential = api.handshakes.length;
    // Another API client of the same KubeConfig shares them; calls at once open a few more.
    const again = kc.makeApiClient(CoreV1Api);
    await Promise.all(Array.from({ length: 10 }, () => again.listNamespace()));
    expect(api.handshakes.length - sequential).toBeLessThan(10);
    for (let i = 0; i < 10; i++) await again.listNamespace();
    const opened = api.handshakes.length;
    await core.listNamespace();
    expect(api.handshakes).toHaveLength(opened);
    expect(new Set(api.handshakes)).toEqual(new Set(['alice']));
  });

  it('a rotated client certificate is used from the next call on, over connections of its own', async () => {
    api.handshakes.length = 0;
    const kc = new KubeConfig();
    load(kc, api.url, pki, 'alice');
    const core = kc.makeApiClient(CoreV1Api);
    for (let i = 0; i < 3; i++) await core.listNamespace();
    const before = api.handshakes.length;
    // The same files, a new certificate in them (as a rotation writes it).
    await pki.issue({ name: 'alice', subject: '/CN=alice-rotated', usage: 'clientAuth' });
    for (let i = 0; i < 3; i++) await core.listNamespace();
    expect(new Set(api.handshakes.slice(0, before))).toEqual(new Set(['alice']));
    const after = api.handshakes.slice(before);
    expect(new Set(after)).toEqual(new Set(['alice-rotated']));
    expect(after.length).toBeLessThanOrEqual(2);
  });
});
