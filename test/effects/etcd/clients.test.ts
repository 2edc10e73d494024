import { describe, expect, it } from 'vitest';
import { EtcdClients, type EtcdAddresses } from '../../../effects/etcd/clients.ts';

// etcd3 clients connect on their first call: these tests make clients and never call, so no etcd runs.
const ref = { namespace: 'ns', name: 'demo', uid: 'u1' };
const other = { namespace: 'ns', name: 'other', uid: 'u2' };
const url = (m: string): string => `http://${m}.demo.ns.svc:2379`;

function clientsOver(members: Record<string, string[]>): EtcdClients {
  return new EtcdClients((c): EtcdAddresses => ({
    endpoints: (members[c.uid] ?? []).map(url),
    clientURL: (m) => url(m),
  }));
}

describe('etcd clients', () => {
  it('a cluster of one endpoint shares one client with that member', () => {
    const clients = clientsOver({ u1: ['demo-0'] });
    expect(clients.cluster(ref)).toBe(clients.member(ref, 'demo-0'));
    expect(clients.size).toBe(1);
    clients.close();
  });

  it('a cluster of three has one client over all and one per member asked', () => {
    const clients = clientsOver({ u1: ['demo-0', 'demo-1', 'demo-2'] });
    const all = clients.cluster(ref);
    expect(clients.member(ref, 'demo-0')).not.toBe(all);
    expect(clients.cluster(ref)).toBe(all);
    expect(clients.size).toBe(2);
    clients.close();
  });

  it('forgetting a cluster closes its clients only, and the next call opens a new one', () => {
    const clients = clientsOver({ u1: ['demo-0', 'demo-1'], u2: ['other-0'] });
    const first = clients.cluster(ref);
    clients.member(ref, 'demo-1');
    const kept = clients.cluster(other);
    clients.forget(ref.uid);
    expect(clients.size).toBe(1);
    expect(clients.cluster(other)).toBe(kept);
    expect(clients.cluster(ref)).not.toBe(first);
    clients.close();
    expect(clients.size).toBe(0);
  });
});
