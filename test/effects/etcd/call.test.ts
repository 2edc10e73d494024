import type { Etcd3 } from 'etcd3';
import { describe, expect, it } from 'vitest';
import { etcdError, onCluster } from '../../../effects/etcd/_call.ts';
import type { EtcdClients } from '../../../effects/etcd/clients.ts';
import { ERR } from '../../../machines/error-codes.ts';

const cluster = { namespace: 'default', name: 'demo', uid: 'u1' };

/** Clients whose endpoints are just names: the call under test decides what each answers. */
const clients = (endpoints: string[], answered: string[] = []): EtcdClients =>
  ({
    endpoints: () => endpoints,
    endpoint: (_: unknown, url: string) => url,
    callTimeoutMs: 1000,
    answered: (_: unknown, url: string) => answered.push(url),
  }) as unknown as EtcdClients;

describe('etcd calls: which failures another member may answer', () => {
  it('a member whose connection resets (one just removed from etcd) is passed over for the next', async () => {
    const answered: string[] = [];
    const asked: string[] = [];
    const result = await onCluster(
      { etcd: clients(['a', 'b'], answered), cluster, signal: AbortSignal.timeout(5000) },
      (client) => {
        const url = client as unknown as string;
        asked.push(url);
        return url === 'a' ? Promise.reject(new Error('14 UNAVAILABLE: read ECONNRESET')) : Promise.resolve('members');
      },
    );
    expect([result, asked, answered]).toEqual(['members', ['a', 'b'], ['b']]);
  });

  it('a member whose connection dropped is passed over for the next, as one that reset is', async () => {
    const asked: string[] = [];
    const result = await onCluster(
      { etcd: clients(['a', 'b']), cluster, signal: AbortSignal.timeout(5000) },
      (client) => {
        const url = client as unknown as string;
        asked.push(url);
        return url === 'a'
          ? Promise.reject(new Error('14 UNAVAILABLE: Connection dropped'))
          : Promise.resolve('members');
      },
    );
    expect([result, asked]).toEqual(['members', ['a', 'b']]);
  });

  it('an address where something other than etcd answers (the Pod IP of a lost node, routed elsewhere) is passed over, and the next member answers', async () => {
    const answered: string[] = [];
    const asked: string[] = [];
    const notEtcd = new Error('12 UNIMPLEMENTED: Received HTTP status code 404');
    const result = await onCluster(
      { etcd: clients(['lost', 'b'], answered), cluster, signal: AbortSignal.timeout(5000) },
      (client) => {
        const url = client as unknown as string;
        asked.push(url);
        return url === 'lost' ? Promise.reject(notEtcd) : Promise.resolve('members');
      },
    );
    expect([result, asked, answered]).toEqual(['members', ['lost', 'b'], ['b']]);
    expect(etcdError(ERR.REMOVE_MEMBER, 'member list', notEtcd)).toMatchObject({ code: 'ERR_ETCD_UNAVAILABLE' });
  });

  it('a reset on every member is reported as etcd unavailable, to be retried', () => {
    expect(etcdError(ERR.REMOVE_MEMBER, 'member list', new Error('14 UNAVAILABLE: read ECONNRESET'))).toMatchObject({
      code: 'ERR_ETCD_UNAVAILABLE',
    });
  });

  it('an answer etcd gives on purpose is not passed over', async () => {
    const asked: string[] = [];
    const refusal = new Error('etcdserver: re-configuration failed due to not enough started members');
    const call = onCluster(
      { etcd: clients(['a', 'b']), cluster, signal: AbortSignal.timeout(5000) },
      (client: Etcd3) => {
        asked.push(client as unknown as string);
        return Promise.reject(refusal);
      },
    );
    await expect(call).rejects.toBe(refusal);
    expect(asked).toEqual(['a']);
  });
});
