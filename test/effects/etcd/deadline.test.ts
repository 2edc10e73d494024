import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addLearner, EtcdClients, probeCluster } from '../../../effects/etcd/index.ts';
import { LocalEtcd } from './local-etcd.ts';

const silent = { info() {}, warn() {}, error() {} };

describe('etcd calls against an endpoint that accepts connections and never answers', { timeout: 60_000 }, () => {
  const local = new LocalEtcd('deadline');
  const silence = net.createServer(() => {});
  let silentURL = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => silence.listen(0, '127.0.0.1', resolve));
    silentURL = `http://127.0.0.1:${(silence.address() as net.AddressInfo).port}`;
    await local.startSeed('deadline-0');
  }, 60_000);
  afterAll(async () => {
    silence.close();
    await local.stop();
  });

  it('the probe moves past a silent endpoint to one that answers', async () => {
    const clients = new EtcdClients(
      (ref) => {
        const real = local.resolve(ref);
        return {
          endpoints: [silentURL, ...real.endpoints],
          clientURL: (m) => (m === 'deadline-0' ? real.clientURL(m) : silentURL),
        };
      },
      { callTimeoutMs: 300 },
    );
    try {
      const seen = await probeCluster(clients, local.ref, AbortSignal.timeout(10_000));
      expect(seen.members.map((m) => m.name)).toEqual(['deadline-0']);
      expect(seen.healthy).toEqual(seen.members.map((m) => m.id));
    } finally {
      clients.close();
    }
  });

  it('a handler stops at its context deadline when no endpoint answers: ERR_ETCD_UNAVAILABLE, retryable', async () => {
    const clients = new EtcdClients(() => ({ endpoints: [silentURL], clientURL: () => silentURL }), {
      callTimeoutMs: 600_000,
    });
    try {
      const ctx = { cluster: local.ref, signal: AbortSignal.timeout(300), log: silent, etcd: clients };
      await expect(addLearner.run({ member: 'deadline-1', peerURL: 'http://127.0.0.1:1' }, ctx)).rejects.toMatchObject({
        code: 'ERR_ETCD_UNAVAILABLE',
        retryable: true,
      });
      await expect(probeCluster(clients, local.ref, AbortSignal.timeout(300))).rejects.toMatchObject({
        code: 'ERR_ETCD_UNAVAILABLE',
      });
    } finally {
      clients.close();
    }
  });
});
