import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { LABEL } from '../../effects/kubernetes/meta.ts';
import type { MemberState } from '../../machines/member-state.ts';
import {
  claimsListed,
  clusterObserved,
  memberObserved,
  membersListed,
  ordinalOf,
  podObserved,
  pvcObserved,
} from '../../manager/observe.ts';

const cluster = (o: Partial<EtcdCluster['metadata']> = {}, replicas = 3): EtcdCluster => ({
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'demo', namespace: 'default', uid: 'u1', ...o },
  spec: { replicas, version: '3.6.16', storage: { size: '1Gi' }, progressDeadlineSeconds: 600 },
});
const member = (
  name: string,
  o: { dormant?: boolean; state?: MemberState; deleting?: boolean; cluster?: string } = {},
): EtcdMember => ({
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdMember',
  metadata: { name, namespace: 'default', ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: {
    cluster: o.cluster ?? 'demo',
    version: '3.6.16',
    storage: { size: '1Gi' },
    bootstrap: name === 'demo-0',
    dormant: o.dormant ?? false,
  },
  ...(o.state ? { status: { state: o.state } } : {}),
});

describe('manager: what the watches see becomes machine events', () => {
  it('an EtcdCluster becomes its spec, or its deletion', () => {
    expect(clusterObserved(cluster(), 7)).toEqual({
      type: 'k8s.cluster.updated',
      at: 7,
      spec: { replicas: 3, version: '3.6.16' },
      progressDeadlineSeconds: 600,
      maintenance: { defrag: null, quotaBytes: null },
      volumeSize: { quantity: '1Gi', bytes: 2 ** 30 },
    });
    expect(clusterObserved(cluster({ deletionTimestamp: new Date() }), 7)).toEqual({
      type: 'k8s.cluster.deleted',
      at: 7,
    });
  });

  it('a restore from a named EtcdSnapshot names it (the cluster holds it), a source given directly does not', () => {
    const named = cluster();
    named.spec.bootstrap = { restore: { snapshotName: 'nightly' } };
    expect(clusterObserved(named, 7)).toMatchObject({ restore: true, restoreSnapshot: 'nightly' });
    const direct = cluster();
    direct.spec.bootstrap = { restore: { source: { pvc: { claimName: 'b', path: 'x.db' } } } };
    expect(clusterObserved(direct, 7)).not.toHaveProperty('restoreSnapshot');
  });

  it("a member's initial cluster naming it alone is a cluster of its own; one naming others is not", () => {
    const seed = member('demo-3');
    seed.spec.bootstrap = true;
    seed.spec.initialCluster = 'demo-3=http://demo-3.demo.default.svc:2380';
    expect(memberObserved(seed, cluster(), 7)).toMatchObject({ alone: true });
    seed.spec.initialCluster = 'demo-3=http://a:2380,demo-4=http://b:2380';
    expect(memberObserved(seed, cluster(), 7)).toMatchObject({ alone: false });
    expect(memberObserved(member('demo-1'), cluster(), 7)).not.toHaveProperty('alone');
  });

  it("storage.size reaches the cluster machine in bytes (none in memory), and each member's claim as the claim says", () => {
    const memory = cluster();
    memory.spec.storage = { size: '256Mi', medium: 'Memory' };
    expect(clusterObserved(memory, 7)).toMatchObject({ volumeSize: null });
    const claim = (member: string, o: Partial<V1PersistentVolumeClaim['status']> & { request?: string } = {}) => ({
      metadata: { name: `data-${member}`, labels: { [LABEL.cluster]: 'demo', [LABEL.member]: member } },
      spec: { storageClassName: 'local-sized', resources: { requests: { storage: o.request ?? '128Mi' } } },
      status: { phase: 'Bound', capacity: { storage: '64Mi' }, ...o },
    });
    const other = { ...claim('other-0'), metadata: { name: 'data-other-0', labels: { [LABEL.cluster]: 'other' } } };
    const event = claimsListed(
      'demo',
      [
        claim('demo-10', { capacity: { storage: '128Mi' } }),
        claim('demo-2', {
          conditions: [{ type: 'ControllerResizeError', status: 'True', message: 'quota exceeded' }],
        }),
        claim('demo-1', { conditions: [{ type: 'FileSystemResizePending', status: 'True' }] }),
        { ...claim('demo-3'), status: { phase: 'Pending' } },
        other,
      ],
      7,
    );
    const Mi = 2 ** 20;
    expect(event).toEqual({
      type: 'k8s.claims.listed',
      at: 7,
      claims: [
        { member: 'demo-1', storageClass: 'local-sized', requested: 128 * Mi, capacity: 64 * Mi, pending: true },
        {
          member: 'demo-2',
          storageClass: 'local-sized',
          requested: 128 * Mi,
          capacity: 64 * Mi,
          failure: 'ControllerResizeError: quota exceeded',
        },
        { member: 'demo-3', storageClass: 'local-sized', requested: 128 * Mi, capacity: null },
        { member: 'demo-10', storageClass: 'local-sized', requested: 128 * Mi, capacity: 128 * Mi },
      ],
    });
  });

  it('spec.maintenance and the backend quota reach the cluster machine in bytes', () => {
    const c = cluster();
    c.spec.options = { quotaBackendBytes: '16Mi' };
    c.spec.maintenance = {
      defrag: {
        schedule: '0 3 * * *',
        timeZone: 'Europe/Berlin',
        threshold: { fragmentedBytes: '64Mi', fragmentedPercent: 50 },
      },
    };
    expect(clusterObserved(c, 7)).toMatchObject({
      maintenance: {
        defrag: {
          schedule: '0 3 * * *',
          timeZone: 'Europe/Berlin',
          fragmentedBytes: 64 * 2 ** 20,
          fragmentedPercent: 50,
        },
        quotaBytes: 16 * 2 ** 20,
      },
    });
    c.spec.maintenance = { defrag: { threshold: { fragmentedPercent: 30 } } };
    expect(clusterObserved(c, 7)).toMatchObject({
      maintenance: {
        defrag: { schedule: null, timeZone: null, fragmentedBytes: null, fragmentedPercent: 30 },
        quotaBytes: 16 * 2 ** 20,
      },
    });
  });

  it("lists only the cluster's own members, in ordinal order, with their machine states and versions", () => {
    const listed = { bootstrap: false, version: '3.6.16' };
    const event = membersListed(
      'demo',
      [
        member('demo-10', { state: 'voter' }),
        member('demo-2', { state: 'parking', dormant: true }),
        member('other-0', { cluster: 'other' }),
        member('demo-3', { deleting: true }),
      ],
      1,
    );
    expect(event).toEqual({
      type: 'k8s.members.listed',
      at: 1,
      members: [
        { ...listed, name: 'demo-2', ordinal: 2, dormant: true, state: 'parking', deleting: false },
        { ...listed, name: 'demo-3', ordinal: 3, dormant: false, state: 'pending', deleting: true },
        { ...listed, name: 'demo-10', ordinal: 10, dormant: false, state: 'voter', deleting: false },
      ],
    });
  });

  it('a Pod says which etcd version it runs by its etcd image, and a member which version it should run', () => {
    const pod = (image: string) => ({
      metadata: { uid: 'p1' },
      spec: {
        containers: [
          { name: 'check-data', image: 'etcd-operator:dev' },
          { name: 'etcd', image },
        ],
      },
    });
    expect(podObserved(pod('quay.io/coreos/etcd:v3.5.35'), 1)).toMatchObject({ pod: { version: '3.5.35' } });
    expect(podObserved(pod('registry.local/etcd:latest'), 1)).not.toHaveProperty('pod.version');
    expect(memberObserved(member('demo-1'), cluster(), 2)).toMatchObject({ version: '3.6.16' });
  });

  it('the CA digest the manager read reaches the cluster machine; a member and its Pod say which digest each has', () => {
    expect(clusterObserved(cluster(), 7, 'abc')).toMatchObject({
      spec: { replicas: 3, version: '3.6.16', trust: 'abc' },
    });
    expect(clusterObserved(cluster(), 7)).not.toHaveProperty('spec.trust');
    const trusting = { ...member('demo-1', { state: 'voter' }) };
    trusting.spec = { ...trusting.spec, trust: 'new' };
    const podOf = (name: string) =>
      name === 'demo-1' ? { metadata: { uid: 'p1', annotations: { 'etcd-operator.dev/trust': 'old' } } } : undefined;
    expect(membersListed('demo', [trusting, member('demo-2')], 1, podOf)).toMatchObject({
      members: [
        { name: 'demo-1', trust: 'new', podTrust: 'old' },
        { name: 'demo-2', version: '3.6.16' },
      ],
    });
    expect(membersListed('demo', [member('demo-2')], 1, podOf)).not.toHaveProperty('members.0.trust');
    expect(memberObserved(trusting, cluster(), 2)).toMatchObject({ trust: 'new' });
    expect(podObserved(podOf('demo-1'), 3)).toMatchObject({ pod: { trust: 'old' } });
  });

  it('spec.recovery reaches the cluster machine; a member and its Pod say whether etcd is forced to start alone', () => {
    const asking = cluster();
    asking.spec.recovery = { requestID: 'r1', from: 'survivor', member: 'demo-0' };
    expect(clusterObserved(asking, 7)).toMatchObject({
      recovery: { requestID: 'r1', from: 'survivor', member: 'demo-0' },
    });
    expect(clusterObserved(cluster(), 7)).not.toHaveProperty('recovery');
    const forced = { ...member('demo-0', { state: 'voter' }) };
    forced.spec = { ...forced.spec, forceNewCluster: 'r1' };
    const annotated = { metadata: { uid: 'p0', annotations: { 'etcd-operator.dev/force-new-cluster': 'r1' } } };
    const podOf = (name: string) =>
      name === 'demo-0' ? annotated : name === 'demo-1' ? { metadata: { uid: 'p1' } } : undefined;
    const listed = membersListed('demo', [forced, member('demo-1'), member('demo-2')], 1, podOf);
    expect(listed).toMatchObject({
      members: [
        { name: 'demo-0', forceNewCluster: 'r1', pod: { forceNewCluster: 'r1' } },
        { name: 'demo-1', pod: { forceNewCluster: '' } },
        { name: 'demo-2' },
      ],
    });
    expect(listed).not.toHaveProperty('members.2.pod');
    expect(memberObserved(forced, cluster(), 2)).toMatchObject({ forceNewCluster: 'r1' });
    expect(podObserved(annotated, 3)).toMatchObject({ pod: { forceNewCluster: 'r1' } });
  });

  it('a Pod that Kubernetes evicts from a down node (taint eviction) names that node', () => {
    const evicted = {
      metadata: { uid: 'p1', deletionTimestamp: new Date() },
      spec: { nodeName: 'node-b', containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.6.16' }] },
      status: {
        conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }],
      },
    };
    expect(podObserved(evicted, 1)).toMatchObject({ pod: { evictedFromNode: 'node-b', deleting: true } });
    const evicting = { ...evicted, metadata: { uid: 'p1' } };
    expect(podObserved(evicting, 1)).not.toHaveProperty('pod.evictedFromNode');
    const drained = {
      ...evicted,
      status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }] },
    };
    expect(podObserved(drained, 1)).not.toHaveProperty('pod.evictedFromNode');
  });

  it("reads ordinals only from the cluster's own naming", () => {
    expect([
      ordinalOf('demo', 'demo-4'),
      ordinalOf('demo', 'demo-x'),
      ordinalOf('demo', 'demo-2-1'),
      ordinalOf('de', 'demo-1'),
    ]).toEqual([4, -1, -1, -1]);
  });

  it('a member knows when its cluster is going (or gone), so it leaves without touching etcd', () => {
    expect(memberObserved(member('demo-1'), cluster(), 2)).toMatchObject({ deleting: false, clusterDeleting: false });
    expect(
      memberObserved(member('demo-1', { deleting: true }), cluster({ deletionTimestamp: new Date() }), 2),
    ).toMatchObject({ deleting: true, clusterDeleting: true });
    expect(memberObserved(member('demo-1', { deleting: true }), undefined, 2)).toMatchObject({ clusterDeleting: true });
  });

  it("a member sees its own and its cluster's generation, and how often etcd restarted in its Pod", () => {
    expect(
      memberObserved(
        { ...member('demo-1'), metadata: { name: 'demo-1', generation: 3 } },
        cluster({ generation: 7 }),
        2,
      ),
    ).toMatchObject({ generation: 3, clusterGeneration: 7 });
    const containerStatuses = [
      { name: 'check-data', restartCount: 0, image: 'x', imageID: '', ready: false },
      { name: 'etcd', restartCount: 2, image: 'x', imageID: '', ready: true },
    ];
    expect(podObserved({ metadata: { uid: 'p1' }, status: { phase: 'Running', containerStatuses } }, 3)).toMatchObject({
      pod: { restarts: 2 },
    });
  });

  it('a failed member carries the reason its status gives', () => {
    const failed: EtcdMember = {
      ...member('demo-1'),
      status: {
        state: 'failed',
        conditions: [
          {
            type: 'Progressing',
            status: 'False',
            reason: 'Failed',
            message: 'HTTP 422',
            lastTransitionTime: '2026-11-21T00:00:00Z',
          },
        ],
      },
    };
    expect(membersListed('demo', [failed], 1)).toMatchObject({
      members: [{ name: 'demo-1', state: 'failed', failure: 'HTTP 422' }],
    });
  });

  it('a Pod is ready only with a Ready condition, and a claim being deleted counts as gone', () => {
    const pod = {
      metadata: { uid: 'p1' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    };
    expect(podObserved(pod, 3)).toEqual({
      type: 'k8s.pod.observed',
      at: 3,
      pod: { uid: 'p1', phase: 'Running', ready: true, deleting: false, restarts: 0 },
    });
    expect(
      podObserved({ ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } }, 3),
    ).toMatchObject({ pod: { ready: false } });
    expect(podObserved(undefined, 3)).toEqual({ type: 'k8s.pod.observed', at: 3, pod: null });
    expect(pvcObserved({ metadata: {}, status: { phase: 'Bound' } }, 4)).toEqual({
      type: 'k8s.pvc.observed',
      at: 4,
      bound: true,
    });
    expect(pvcObserved({ metadata: { deletionTimestamp: new Date() }, status: { phase: 'Bound' } }, 4)).toEqual({
      type: 'k8s.pvc.observed',
      at: 4,
      bound: null,
    });
    expect(pvcObserved(undefined, 4)).toEqual({ type: 'k8s.pvc.observed', at: 4, bound: null });
  });
});
