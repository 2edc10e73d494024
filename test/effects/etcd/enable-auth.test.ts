import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enableAuth, probeCluster, type EtcdClientTLS } from '../../../effects/etcd/index.ts';
import { joinMember, LocalEtcd } from './local-etcd.ts';
import { credentialsOf, TestPki, type Leaf } from './test-pki.ts';

// Real etcd 3.5 and 3.6 members with client and peer TLS (--client-cert-auth), reached by the handler's
// clients with the operator's certificate, whose common name is root: after enableAuth etcd
// takes each client's user from its certificate's common name.
let pki: TestPki;
let member: Leaf;
let root: EtcdClientTLS;
let nobody: EtcdClientTLS;

beforeAll(async () => {
  pki = await TestPki.create();
  member = await pki.issue({
    name: 'member',
    subject: '/CN=member',
    usage: 'serverAuth,clientAuth',
    sans: ['IP:127.0.0.1', 'DNS:localhost'],
  });
  root = credentialsOf(await pki.issue({ name: 'root', subject: '/CN=root', usage: 'clientAuth' }));
  nobody = credentialsOf(await pki.issue({ name: 'nobody', subject: '/CN=nobody', usage: 'clientAuth' }));
});
afterAll(() => pki?.remove());

/** A client of one member with a certificate, as an application would have one. */
const clientWith = (url: string, tls: EtcdClientTLS): Etcd3 =>
  new Etcd3({ hosts: [url], credentials: { rootCertificate: tls.ca, certChain: tls.cert, privateKey: tls.key } });

const deadline = () => ({ deadline: Date.now() + 5000 });

describe.each(['3.5.35', '3.6.16', '3.7.3'])(
  'enableAuth against real etcd %s over TLS',
  { timeout: 60_000 },
  (version) => {
    let local: LocalEtcd;
    beforeAll(async () => {
      local = new LocalEtcd('auth', version, { tls: { member, client: root } });
      await local.startSeed('a0');
      await joinMember(local, 'a1');
    });
    afterAll(() => local?.stop());

    it('recover: not done while etcd says auth is off', async () => {
      expect(await enableAuth.recover({ cluster: 'auth' }, local.ctx())).toEqual({ done: false });
    });

    it('a run after a crash between its calls finishes the rest: root (no password), the role root, auth on', async () => {
      // The crash left root added, nothing more.
      const direct = clientWith(local.resolve(local.ref).clientURL('a1'), root);
      try {
        await direct.auth.userAdd({ name: 'root', options: { no_password: true } }, deadline());
      } finally {
        direct.close();
      }
      const result = await enableAuth.run({ cluster: 'auth' }, local.ctx());
      expect(result).toEqual({ enabled: true, did: ['role add root', 'grant the role root to root', 'auth enable'] });
      const etcd = clientWith(local.resolve(local.ref).clientURL('a0'), root);
      try {
        expect((await etcd.auth.authStatus(deadline())).enabled).toBe(true);
        expect((await etcd.auth.userGet({ name: 'root' }, deadline())).roles).toEqual(['root']);
        expect((await etcd.auth.roleList(deadline())).roles).toEqual(['root']);
      } finally {
        etcd.close();
      }
    });

    it('recover: done once auth is on; a run again changes nothing', async () => {
      expect(await enableAuth.recover({ cluster: 'auth' }, local.ctx())).toEqual({
        done: true,
        result: { enabled: true, did: [] },
      });
      expect(await enableAuth.run({ cluster: 'auth' }, local.ctx())).toEqual({ enabled: true, did: [] });
    });

    it('a certificate with the common name root reads and writes; the operator still probes and lists members', async () => {
      const etcd = clientWith(local.resolve(local.ref).clientURL('a1'), root);
      try {
        await etcd.put('k').value('v').options(deadline()).exec();
        expect(await etcd.get('k').options(deadline()).string()).toBe('v');
      } finally {
        etcd.close();
      }
      const seen = await probeCluster(local.clients, local.ref, AbortSignal.timeout(10_000));
      expect(seen.members).toHaveLength(2);
      expect(seen.healthy).toHaveLength(2);
    });

    it('a certificate with another common name is refused: permission denied', async () => {
      const etcd = clientWith(local.resolve(local.ref).clientURL('a0'), nobody);
      try {
        await expect(etcd.get('k').options(deadline()).string()).rejects.toThrow(/permission denied/);
        await expect(etcd.put('k').value('x').options(deadline()).exec()).rejects.toThrow(/permission denied/);
      } finally {
        etcd.close();
      }
    });

    it("the kubelet's readiness probe on the plain metrics port still answers 200 with auth on", async () => {
      for (const m of ['a0', 'a1']) {
        const res = await fetch(`${local.metricsURL(m)}/readyz?exclude=non_learner`);
        expect(res.status, await res.text()).toBe(200);
        expect((await fetch(`${local.metricsURL(m)}/health`)).status).toBe(200);
      }
    });
  },
);
