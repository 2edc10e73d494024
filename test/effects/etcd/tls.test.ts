import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdClients, moveLeader, probeCluster, removeEtcdMember } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd, retrying } from './local-etcd.ts';
import { credentialsOf, TestPki, type Leaf } from './test-pki.ts';

// Real etcd 3.6 members serving https on client and peer URLs with --client-cert-auth and
// --peer-client-cert-auth, reached by the handlers' clients with the operator's certificate.
let pki: TestPki;
let member: Leaf;
let operator: Leaf;

beforeAll(async () => {
  pki = await TestPki.create();
  // Peers dial from 127.0.0.1 and etcd checks their certificate against that address.
  member = await pki.issue({
    name: 'member',
    subject: '/CN=member',
    usage: 'serverAuth,clientAuth',
    sans: ['IP:127.0.0.1', 'DNS:localhost', 'DNS:*.demo.test.svc'],
  });
  operator = await pki.issue({ name: 'operator', subject: '/CN=etcd-operator', usage: 'clientAuth' });
  await pki.issue({
    name: 'named',
    subject: '/CN=named',
    usage: 'serverAuth,clientAuth',
    sans: ['DNS:m0.demo.test.svc'],
  });
});
afterAll(() => pki?.remove());

describe('etcd handlers over TLS', { timeout: 60_000 }, () => {
  let local: LocalEtcd;
  beforeAll(async () => {
    local = new LocalEtcd('tls', '3.6.16', { tls: { member, client: credentialsOf(operator) } });
    await local.startSeed('t0');
    await joinMember(local, 't1');
    await joinMember(local, 't2');
    // Three members, each join after etcd's 5 s hold: more than the 10 s default on a loaded machine.
  }, 60_000);
  afterAll(() => local?.stop());

  it('grows a cluster with https peer URLs through addLearner and promoteLearner, and probes it', async () => {
    const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
    expect(seen.members.map((m) => m.peerURL).sort()).toEqual(['t0', 't1', 't2'].map((m) => local.peerURL(m)).sort());
    expect(seen.members.every((m) => m.peerURL.startsWith('https://') && !m.learner)).toBe(true);
    expect(seen.healthy).toHaveLength(3);
    expect(seen.leader).not.toBeNull();
  });

  it('moves leadership and removes a member over TLS', async () => {
    const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
    const leader = seen.members.find((m) => m.id === seen.leader)!;
    const to = seen.members.find((m) => m.id !== seen.leader)!;
    await moveLeader.run({ member: leader.name, memberID: leader.id, toID: to.id }, local.ctx());
    const victim = seen.members.find((m) => m.id !== to.id)!;
    // etcd holds membership changes for a few seconds after the last join.
    await retrying('ERR_ETCD_UNHEALTHY', () =>
      removeEtcdMember.run({ peerURL: victim.peerURL, memberID: victim.id, reason: 'test' }, local.ctx()),
    );
    const after = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
    expect(after.leader).toBe(to.id);
    expect(after.members.map((m) => m.id)).not.toContain(victim.id);
  });

  it('refuses a client with no certificate, and one whose certificate another CA signed', async () => {
    const url = local.resolve(local.ref).clientURL('t0');
    const anonymous = new Etcd3({ hosts: [url], credentials: { rootCertificate: credentialsOf(operator).ca } });
    const other = await TestPki.create();
    try {
      const stranger = await other.issue({ name: 'stranger', subject: '/CN=stranger', usage: 'clientAuth' });
      const foreign = new Etcd3({
        hosts: [url],
        credentials: { ...toCredentials(credentialsOf(stranger)), rootCertificate: credentialsOf(operator).ca },
      });
      await expect(anonymous.get('k').options({ deadline: Date.now() + 3000 })).rejects.toThrow();
      await expect(foreign.get('k').options({ deadline: Date.now() + 3000 })).rejects.toThrow();
      foreign.close();
    } finally {
      anonymous.close();
      other.remove();
    }
  });
});

describe('etcd clients over TLS by address', { timeout: 60_000 }, () => {
  let local: LocalEtcd;
  beforeAll(async () => {
    // A certificate for the member's name only: called at 127.0.0.1, it is checked against that name.
    const named = pki.leaf('named');
    local = new LocalEtcd('named', '3.6.16', {
      tls: { member: named, client: credentialsOf(operator), peer: false, serverName: 'm0.demo.test.svc' },
    });
    await local.startSeed('m0');
  }, 60_000);
  afterAll(() => local?.stop());

  it('checks the certificate against the name the resolver gives, not the address', async () => {
    const status = await local.clients.member(local.ref, 'm0').maintenance.status();
    expect(status.version).toBe('3.6.16');
    // The same member without the name: its certificate does not cover 127.0.0.1.
    const byAddress = new EtcdClients((ref) => ({ ...local.resolve(ref), serverName: () => undefined }));
    try {
      await expect(
        byAddress.member(local.ref, 'm0').maintenance.status({ deadline: Date.now() + 3000 }),
      ).rejects.toThrow();
    } finally {
      byAddress.close();
    }
  });

  it('says why it cannot call an https endpoint when it has no certificate, before calling', () => {
    const { tls: _, ...plain } = local.resolve(local.ref);
    const none = new EtcdClients(() => ({
      ...plain,
      tlsProblem: 'Secret test/op (spec.tls.client.operatorSecretRef) has no tls.key',
    }));
    expect(() => none.member(local.ref, 'm0')).toThrow(
      expect.objectContaining({
        code: 'ERR_TLS_SECRET',
        message: expect.stringContaining('has no tls.key') as string,
      }),
    );
  });
});

const toCredentials = (c: { ca: Buffer; cert: Buffer; key: Buffer }) => ({
  rootCertificate: c.ca,
  certChain: c.cert,
  privateKey: c.key,
});
