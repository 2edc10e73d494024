import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdMember, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { collectionPath, WATCHES } from '../../manager/watches.ts';

const member = (name: string): EtcdMember => ({ metadata: { name, namespace: 'ns' } }) as EtcdMember;
const snapshot = (name: string): EtcdSnapshot => ({ metadata: { name, namespace: 'ns' } }) as EtcdSnapshot;
const routing = { membersOf: () => [member('demo-0'), member('demo-1')], snapshotsOf: () => [snapshot('nightly')] };
const cluster = (generation: number, observedGeneration: number): EtcdCluster =>
  ({ metadata: { name: 'demo', namespace: 'ns', generation }, status: { observedGeneration } }) as EtcdCluster;

describe('watches', () => {
  it('a cluster concerns itself and its snapshots, and its members too when its spec was edited', () => {
    expect(WATCHES.clusters.route(cluster(2, 2), routing)).toEqual(['EtcdCluster/ns/demo', 'EtcdSnapshot/ns/nightly']);
    expect(WATCHES.clusters.route(cluster(3, 2), routing)).toEqual([
      'EtcdCluster/ns/demo',
      'EtcdMember/ns/demo-0',
      'EtcdMember/ns/demo-1',
      'EtcdSnapshot/ns/nightly',
    ]);
  });

  it("a snapshot's Job and its Pods concern the snapshot their label names", () => {
    const labels = { 'etcd-operator.dev/snapshot': 'nightly', 'etcd-operator.dev/job': 'snapshot' };
    const job: V1Job = { metadata: { name: 'nightly-snapshot', namespace: 'ns', labels } };
    const pod: V1Pod = { metadata: { name: 'nightly-snapshot-x1', namespace: 'ns', labels } };
    expect(WATCHES.jobs.route(job, routing)).toEqual(['EtcdSnapshot/ns/nightly']);
    expect(WATCHES.jobPods.route(pod, routing)).toEqual(['EtcdSnapshot/ns/nightly']);
    expect(collectionPath(WATCHES.jobs.collection, 'ns')).toBe('/apis/batch/v1/namespaces/ns/jobs');
  });

  it('a snapshot a schedule made concerns the schedule its label names too', () => {
    const made = {
      metadata: { name: 'nightly-29453940', namespace: 'ns', labels: { 'etcd-operator.dev/schedule': 'nightly' } },
    } as unknown as EtcdSnapshot;
    expect(WATCHES.snapshots.route(made)).toEqual([
      'EtcdSnapshot/ns/nightly-29453940',
      'EtcdSnapshotSchedule/ns/nightly',
    ]);
    expect(WATCHES.snapshots.route(snapshot('by-hand'))).toEqual(['EtcdSnapshot/ns/by-hand']);
  });

  it('a member concerns itself and its cluster', () => {
    const m = { metadata: { name: 'demo-1', namespace: 'ns' }, spec: { cluster: 'demo' } } as EtcdMember;
    expect(WATCHES.members.route(m)).toEqual(['EtcdMember/ns/demo-1', 'EtcdCluster/ns/demo']);
  });

  it('a Pod concerns the member and cluster its labels name, and nothing without them', () => {
    const labels = { 'etcd-operator.dev/cluster': 'demo', 'etcd-operator.dev/member': 'demo-1' };
    const pod: V1Pod = { metadata: { name: 'demo-1', namespace: 'ns', labels } };
    expect(WATCHES.pods.route(pod, routing)).toEqual(['EtcdMember/ns/demo-1', 'EtcdCluster/ns/demo']);
    const unlabelled: V1Pod = { metadata: { name: 'other', namespace: 'ns' } };
    expect(WATCHES.pods.route(unlabelled, routing)).toEqual([]);
  });

  it('lists and watches in one namespace or in all', () => {
    expect(collectionPath(WATCHES.clusters.collection, 'ns')).toBe(
      '/apis/etcd-operator.dev/v1alpha1/namespaces/ns/etcdclusters',
    );
    expect(collectionPath(WATCHES.pods.collection, undefined)).toBe('/api/v1/pods');
  });
});
