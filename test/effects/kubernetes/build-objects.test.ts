/** Builders of the Services, EtcdMember and PVC: what a user finds on the objects the operator makes. */
import { describe, expect, it } from 'vitest';
import { buildEtcdMember } from '../../../effects/kubernetes/build-member.ts';
import { buildPVC } from '../../../effects/kubernetes/build-pvc.ts';
import { buildClientService, buildHeadlessService } from '../../../effects/kubernetes/build-services.ts';
import { FINALIZER } from '../../../effects/kubernetes/meta.ts';
import { cluster, member } from './fixtures.ts';

describe('Services', () => {
  it('the headless Service is named after the cluster, publishes not-ready Pods and serves client and peer ports', () => {
    const svc = buildHeadlessService(cluster());
    expect(svc.metadata?.name).toBe('demo');
    expect(svc.spec?.clusterIP).toBe('None');
    expect(svc.spec?.publishNotReadyAddresses).toBe(true);
    expect(svc.spec?.ports?.map((p) => [p.name, p.port])).toEqual([
      ['client', 2379],
      ['peer', 2380],
    ]);
    expect(svc.spec?.selector).toEqual({
      'app.kubernetes.io/name': 'etcd',
      'app.kubernetes.io/managed-by': 'etcd-operator',
      'etcd-operator.dev/cluster': 'demo',
    });
  });

  it('the client Service is <cluster>-client, client port only, over ready members', () => {
    const svc = buildClientService(cluster());
    expect(svc.metadata?.name).toBe('demo-client');
    expect(svc.spec?.publishNotReadyAddresses).toBeUndefined();
    expect(svc.spec?.ports?.map((p) => p.port)).toEqual([2379]);
  });

  it.each([
    ['headless', buildHeadlessService],
    ['client', buildClientService],
  ])('the %s Service is controlled by the cluster and carries additionalMetadata, our labels winning', (_, build) => {
    const svc = build(
      cluster({
        additionalMetadata: { labels: { team: 'a', 'etcd-operator.dev/cluster': 'evil' }, annotations: { note: 'x' } },
      }),
    );
    expect(svc.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'etcd-operator.dev/v1alpha1',
        kind: 'EtcdCluster',
        name: 'demo',
        uid: 'cluster-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(svc.metadata?.labels).toMatchObject({ team: 'a', 'etcd-operator.dev/cluster': 'demo' });
    expect(svc.metadata?.annotations).toEqual({ note: 'x' });
  });
});

describe('EtcdMember', () => {
  const params = {
    member: 'demo-3',
    ordinal: 3,
    bootstrap: false,
    initialCluster: 'demo-0=http://demo-0.demo.ns.svc:2380,demo-3=http://demo-3.demo.ns.svc:2380',
    version: '3.6.16',
  };

  it('is owned by its cluster, blocks its deletion, and holds the leave-etcd finalizer', () => {
    const m = buildEtcdMember(cluster(), params);
    expect(m.metadata.name).toBe('demo-3');
    expect(m.metadata.namespace).toBe('ns');
    expect(m.metadata.finalizers).toEqual([FINALIZER]);
    expect(m.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'EtcdCluster',
      uid: 'cluster-uid',
      controller: true,
      blockOwnerDeletion: true,
    });
    expect(m.metadata.labels).toMatchObject({
      'app.kubernetes.io/name': 'etcd',
      'etcd-operator.dev/cluster': 'demo',
      'etcd-operator.dev/member': 'demo-3',
    });
  });

  it('spec comes from the intent and the cluster storage, awake', () => {
    const m = buildEtcdMember(cluster({ storage: { size: '5Gi', storageClassName: 'fast' } }), params);
    expect(m.spec).toEqual({
      cluster: 'demo',
      version: '3.6.16',
      storage: { size: '5Gi', storageClassName: 'fast' },
      bootstrap: false,
      initialCluster: params.initialCluster,
      dormant: false,
    });
  });
});

describe('PersistentVolumeClaim', () => {
  it.each([
    ['the default class', { size: '1Gi' }, undefined],
    ['a named class', { size: '8Gi', storageClassName: 'fast' }, 'fast'],
  ] as const)(
    'data-<member> is owned by the EtcdMember, sized by its storage, with %s',
    (_, storage, storageClassName) => {
      const c = cluster({ storage });
      const pvc = buildPVC(member(c), c);
      expect(pvc?.metadata?.name).toBe('data-demo-0');
      expect(pvc?.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'EtcdMember',
        name: 'demo-0',
        uid: 'member-uid-0',
        controller: true,
      });
      expect(pvc?.spec?.resources?.requests).toEqual({ storage: storage.size });
      expect(pvc?.spec?.storageClassName).toBe(storageClassName);
      expect(pvc?.spec?.accessModes).toEqual(['ReadWriteOnce']);
    },
  );

  it('a member in memory gets no claim', () => {
    const c = cluster({ storage: { size: '256Mi', medium: 'Memory' } });
    expect(buildPVC(member(c), c)).toBeNull();
  });
});
