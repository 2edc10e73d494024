/**
 * The manager's runtime parts against the real API server: an informer lists, then watches
 * every change; two leader electors never lead at once, and a released Lease passes at once.
 */
import { CoordinationV1Api, CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Informer, type Change } from '../../manager/informer.ts';
import { LeaderElector } from '../../manager/leader.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

const ns = `runtime-${Date.now().toString(36)}`;
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
let kc: KubeConfig;
let core: CoreV1Api;

beforeAll(async () => {
  kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
});
afterAll(async () => {
  await core?.deleteNamespace({ name: ns }).catch(() => undefined);
});

const configMap = (name: string): V1ConfigMap => ({
  metadata: { name, namespace: ns, labels: { informer: 'test' } },
  data: { a: '1' },
});

describe('informer', () => {
  it('lists, then watches: objects added, changed and deleted later arrive, in the cache and as changes', async () => {
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('first') });
    const changes: string[] = [];
    const informer = new Informer<V1ConfigMap>({
      name: 'configmaps',
      kubeConfig: kc,
      path: `/api/v1/namespaces/${ns}/configmaps`,
      labelSelector: 'informer=test',
      log: quiet,
      list: async () => {
        const r = await core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'informer=test' });
        return { items: r.items, resourceVersion: r.metadata?.resourceVersion ?? '' };
      },
      onChange: (change: Change, o) => changes.push(`${change} ${o.metadata?.name}`),
    });
    await informer.start();
    try {
      expect(informer.get(ns, 'first')?.data).toEqual({ a: '1' });
      await core.createNamespacedConfigMap({ namespace: ns, body: configMap('later') });
      await core.patchNamespacedConfigMap({
        namespace: ns,
        name: 'first',
        body: [{ op: 'replace', path: '/data/a', value: '2' }],
      });
      await core.deleteNamespacedConfigMap({ namespace: ns, name: 'later' });
      await until('the deletion to arrive', () =>
        Promise.resolve(changes.includes('deleted later') ? true : undefined),
      );
      expect(changes).toEqual(['added first', 'added later', 'modified first', 'deleted later']);
      expect(informer.get(ns, 'first')?.data).toEqual({ a: '2' });
      expect(informer.get(ns, 'later')).toBeUndefined();
    } finally {
      informer.stop();
    }
  });
});

describe('leader election', () => {
  it('one of two candidates leads; the other takes over at once when the Lease is released', async () => {
    const elector = (identity: string): LeaderElector =>
      new LeaderElector({
        kubeConfig: kc,
        namespace: ns,
        name: 'etcd-operator',
        identity,
        retryPeriodMs: 200,
        log: quiet,
      });
    const a = elector('manager-a');
    const b = elector('manager-b');
    await a.campaign(() => undefined);
    expect(a.leading).toBe(true);
    let bLeads = false;
    const bCampaign = b.campaign(() => undefined).then(() => (bLeads = true));
    await new Promise((r) => setTimeout(r, 1500));
    expect(bLeads).toBe(false);
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'etcd-operator', namespace: ns });
    expect(lease.spec?.holderIdentity).toBe('manager-a');
    await a.release();
    await bCampaign;
    expect(b.leading).toBe(true);
    await b.release();
  });
});
