import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import { collectionPath, WATCHES } from '../../manager/watches.ts';

const member = (name: string): EtcdMember => ({ metadata: { name, namespace: 'ns' } }) as EtcdMember;
const routing = { membersOf: () => [member('demo-0'), member('demo-1')] };
const cluster = (generation: number, observedGeneration: number): EtcdCluster =>
  ({ metadata: { name: 'demo', namespace: 'ns', generation }, status: { observedGeneration } }) as EtcdCluster;

describe('watches', () => {
  it('a cluster concerns itself, and its members too when its spec was edited', () => {
    expect(WATCHES.clusters.route(cluster(2, 2), routing)).toEqual(['EtcdCluster/ns/demo']);
    expect(WATCHES.clusters.route(cluster(3, 2), routing)).toEqual([
      'EtcdCluster/ns/demo',
      'EtcdMember/ns/demo-0',
      'EtcdMember/ns/demo-1',
    ]);
  });

  it('a member concerns itself and its cluster', () => {
    const m = { metadata: { name: 'demo-1', namespace: 'ns' }, spec: { cluster: 'demo' } } as EtcdMember;
    expect(WATCHES.members.route(m)).toEqual(['EtcdMember/ns/demo-1', 'EtcdCluster/ns/demo']);
  });

  it('a Pod concerns the member and cluster its labels name, and nothing without them', () => {
    const labels = { 'etcd-operator.dev/cluster': 'demo', 'etcd-operator.dev/member': 'demo-1' };
    const pod: V1Pod = { metadata: { name: 'demo-1', namespace: 'ns', labels } };
    expect(WATCHES.pods.route(pod)).toEqual(['EtcdMember/ns/demo-1', 'EtcdCluster/ns/demo']);
    const unlabelled: V1Pod = { metadata: { name: 'other', namespace: 'ns' } };
    expect(WATCHES.pods.route(unlabelled)).toEqual([]);
  });

  it('lists and watches in one namespace or in all', () => {
    expect(collectionPath(WATCHES.clusters.collection, 'ns')).toBe(
      '/apis/etcd-operator.dev/v1alpha1/namespaces/ns/etcdclusters',
    );
    expect(collectionPath(WATCHES.pods.collection, undefined)).toBe('/api/v1/pods');
  });
});
