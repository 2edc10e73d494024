import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Etcd3 } from 'etcd3';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeCluster, type EtcdClientTLS } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd } from './local-etcd.ts';
import { credentialsOf, TestPki, type Leaf } from './test-pki.ts';

// What renewal in place rests on: etcd reads its certificate and key files at every new TLS
// handshake (client/pkg/transport's GetCertificate and GetClientCertificate), not once at start,
// so a renewed leaf of the same CA written over the files (as the kubelet updates a Secret
// volume) is served from the next connection on, with no restart, and open connections go on.
// The trusted CA file, though, is read once at start: a new CA is trusted only after a restart.
let pki: TestPki;
let member: Leaf;
let operator: EtcdClientTLS;

const sans = ['IP:127.0.0.1', 'DNS:localhost'];

beforeAll(async () => {
  pki = await TestPki.create();
  member = await pki.issue({ name: 'member', subject: '/CN=member', usage: 'serverAuth,clientAuth', sans });
  operator = credentialsOf(await pki.issue({ name: 'operator', subject: '/CN=root', usage: 'clientAuth' }));
});
afterAll(() => pki?.remove());

/** The serial of the certificate served on `url`'s port, from a new TLS handshake. */
function servedSerial(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: hostname,
      port: Number(port),
      ca: operator.ca,
      cert: operator.cert,
      key: operator.key,
      rejectUnauthorized: false,
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('no handshake in 5 s')));
    socket.once('secureConnect', () => {
      resolve(socket.getPeerCertificate().serialNumber.toUpperCase());
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

const serialOf = (file: string): string => new X509Certificate(readFileSync(file)).serialNumber.toUpperCase();

describe('a renewed certificate written over the files of running etcd', { timeout: 60_000 }, () => {
  let local: LocalEtcd;
  beforeAll(async () => {
    local = new LocalEtcd('rotation', '3.6.16', { tls: { member, client: operator } });
    await local.startSeed('r0');
    await joinMember(local, 'r1');
  });
  afterAll(() => local?.stop());

  it('is served on client and peer ports from the next handshake; clients and peers go on; no restart', async () => {
    const client = local.resolve(local.ref).clientURL('r0');
    const peer = local.peerURL('r0');
    const old = serialOf(member.cert);
    expect(await servedSerial(client)).toBe(old);
    expect(await servedSerial(peer)).toBe(old);
    const open = local.clients.member(local.ref, 'r1');
    await open.put('before').value('1');

    const renewed = await pki.issue({ name: 'renewed', subject: '/CN=member', usage: 'serverAuth,clientAuth', sans });
    copyFileSync(renewed.cert, member.cert);
    copyFileSync(renewed.key, member.key);
    const fresh = serialOf(member.cert);
    expect(fresh).not.toBe(old);

    expect(await servedSerial(client)).toBe(fresh);
    expect(await servedSerial(peer)).toBe(fresh);
    // The connection opened before goes on, and the members still form a healthy cluster.
    await open.put('after').value('2');
    const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
    expect(seen.healthy).toHaveLength(2);
  });
});

describe('a new CA written over the trusted CA file of running etcd', { timeout: 60_000 }, () => {
  let local: LocalEtcd;
  let own: TestPki;
  let other: TestPki;
  let caFile: string;
  let oldCA: Buffer;
  beforeAll(async () => {
    // Its own CA: this test rewrites ca.crt.
    own = await TestPki.create();
    const leaf = await own.issue({ name: 'member', subject: '/CN=member', usage: 'serverAuth,clientAuth', sans });
    const client = credentialsOf(await own.issue({ name: 'op', subject: '/CN=root', usage: 'clientAuth' }));
    caFile = leaf.ca;
    oldCA = readFileSync(caFile);
    other = await TestPki.create();
    local = new LocalEtcd('ca-roll', '3.6.16', { tls: { member: leaf, client, peer: false } });
    await local.startSeed('c0');
  });
  afterAll(async () => {
    await local?.stop();
    own?.remove();
    other?.remove();
  });

  it('is not trusted until etcd restarts; a bundle of both CAs then trusts both', async () => {
    const user = credentialsOf(await other.issue({ name: 'user', subject: '/CN=root', usage: 'clientAuth' }));
    const url = local.resolve(local.ref).clientURL('c0');
    const ask = async (): Promise<string> => {
      const c = new Etcd3({
        hosts: [url],
        credentials: { rootCertificate: oldCA, certChain: user.cert, privateKey: user.key },
      });
      try {
        await c.maintenance.status({ deadline: Date.now() + 3000 });
        return 'answered';
      } catch {
        return 'refused';
      } finally {
        c.close();
      }
    };
    expect(await ask()).toBe('refused');
    writeFileSync(caFile, Buffer.concat([oldCA, readFileSync(other.leaf('user').ca)]));
    expect(await ask()).toBe('refused');
    await local.kill('c0', 'SIGTERM');
    await local.start('c0', '', 'existing');
    expect(await ask()).toBe('answered');
    // The old CA's clients still get in: both are trusted during the roll.
    expect((await local.clients.member(local.ref, 'c0').maintenance.status()).version).toBe('3.6.16');
  });
});
