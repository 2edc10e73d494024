import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import { etcdResolver } from '../../manager/resolver.ts';

const member = (name: string, dormant = false): EtcdMember =>
  ({
    metadata: { name, namespace: 'ns' },
    spec: { cluster: 'demo', version: '3.6.16', storage: { size: '1Gi' }, bootstrap: false, dormant },
  }) as EtcdMember;
const pods: Record<string, V1Pod> = { 'demo-0': { status: { podIP: '127.10.0.2' } }, 'demo-1': { status: {} } };
const source = {
  members: () => [member('demo-0'), member('demo-1'), member('demo-2', true)],
  pod: (_: string, name: string) => pods[name],
};
const ref = { namespace: 'ns', name: 'demo', uid: 'u' };

describe('etcd resolver', () => {
  it('dns: every awake member by its headless Service name', () => {
    const r = etcdResolver('dns', source)(ref);
    expect(r.endpoints).toEqual(['http://demo-0.demo.ns.svc:2379', 'http://demo-1.demo.ns.svc:2379']);
    expect(r.clientURL('demo-1')).toBe('http://demo-1.demo.ns.svc:2379');
  });

  it('pod-ip: only Pods that have an address; a member without one falls back to its name', () => {
    const r = etcdResolver('pod-ip', source)(ref);
    expect(r.endpoints).toEqual(['http://127.10.0.2:2379']);
    expect(r.clientURL('demo-0')).toBe('http://127.10.0.2:2379');
    expect(r.clientURL('demo-1')).toBe('http://demo-1.demo.ns.svc:2379');
  });
});

describe('etcd resolver with client TLS', () => {
  const secure = {
    metadata: { name: 'demo', namespace: 'ns', uid: 'u' },
    spec: { tls: { client: { secretRef: { name: 's' }, operatorSecretRef: { name: 'op' } } } },
  } as unknown as EtcdCluster;
  const tls = { ca: Buffer.from('ca'), cert: Buffer.from('cert'), key: Buffer.from('key') };
  const withTLS = { ...source, cluster: () => secure, credentials: () => ({ tls }) };

  it('dns: https names, called with the operator certificate, checked against the names themselves', () => {
    const r = etcdResolver('dns', withTLS)(ref);
    expect(r.endpoints).toEqual(['https://demo-0.demo.ns.svc:2379', 'https://demo-1.demo.ns.svc:2379']);
    expect(r.tls).toBe(tls);
    expect('serverName' in r).toBe(false);
  });

  it("pod-ip: https addresses, each member's certificate checked against its name", () => {
    const r = etcdResolver('pod-ip', withTLS)(ref);
    expect(r.endpoints).toEqual(['https://127.10.0.2:2379']);
    expect(r.serverName?.('https://127.10.0.2:2379')).toBe('demo-0.demo.ns.svc');
    expect(r.serverName?.('https://127.10.0.9:2379')).toBeUndefined();
    expect(r.clientURL('demo-1')).toBe('https://demo-1.demo.ns.svc:2379');
  });

  it('without a usable certificate: says why instead of handing one out', () => {
    const r = etcdResolver('dns', { ...withTLS, credentials: () => ({ problem: 'Secret ns/op has no tls.key' }) })(ref);
    expect(r.tls).toBeUndefined();
    expect(r.tlsProblem).toBe('Secret ns/op has no tls.key');
    expect(etcdResolver('dns', { ...withTLS, credentials: () => undefined })(ref).tlsProblem).toBe(
      'its Secret was not read yet',
    );
  });
});
