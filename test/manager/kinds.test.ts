import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';
import { isKindName, KINDS, type KindName, type ObjectOf } from '../../manager/kinds/index.ts';

const meta = { namespace: 'ns', uid: 'u-1' };
const objects: { [K in KindName]: ObjectOf<K> } = {
  EtcdCluster: { metadata: { ...meta, name: 'demo' }, spec: { replicas: 3, version: '3.6.16' } } as EtcdCluster,
  EtcdMember: {
    metadata: { ...meta, name: 'demo-0', ownerReferences: [{ uid: 'c-1', controller: true }] },
    spec: { cluster: 'demo', version: '3.6.16', storage: { size: '1Gi' }, bootstrap: true },
  } as EtcdMember,
  EtcdSnapshot: { metadata: { ...meta, name: 'nightly' }, spec: { clusterRef: { name: 'demo' } } } as EtcdSnapshot,
  EtcdSnapshotSchedule: {
    metadata: { ...meta, name: 'hourly' },
    spec: { clusterRef: { name: 'demo' } },
  } as EtcdSnapshotSchedule,
};

describe('manager: the table of object kinds', () => {
  it.each(Object.keys(KINDS) as KindName[])('%s: its entry is its own, and its runner is keyed by its uid', (kind) => {
    const spec = KINDS[kind];
    expect(spec.kind).toBe(kind);
    expect(isKindName(kind)).toBe(true);
    const { ref, cluster } = spec.identify(objects[kind] as never, undefined);
    expect(ref).toMatchObject({ kind, namespace: 'ns', uid: 'u-1' });
    expect(cluster.name).toBe('demo');
  });

  it('each kind has a machine name and a collection of its own', () => {
    const specs = Object.values(KINDS);
    expect(new Set(specs.map((s) => s.machineName)).size).toBe(specs.length);
    expect(new Set(specs.map((s) => s.watch.resource)).size).toBe(specs.length);
  });

  it('a member acts for the cluster that controls it; snapshots and schedules for none', () => {
    expect(KINDS.EtcdMember.identify(objects.EtcdMember, undefined).cluster.uid).toBe('c-1');
    expect(KINDS.EtcdSnapshot.identify(objects.EtcdSnapshot, undefined).cluster.uid).toBe('');
    expect(KINDS.EtcdSnapshotSchedule.identify(objects.EtcdSnapshotSchedule, undefined).cluster.uid).toBe('');
  });

  it('a key of no kind is not taken for one', () => {
    expect(isKindName('Pod')).toBe(false);
    expect(isKindName('toString')).toBe(false);
  });
});
