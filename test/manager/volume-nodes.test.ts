import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { pinnedNodes, VolumeNodes, type VolumeNodeReader } from '../../manager/volume-nodes.ts';

/** A volume pinned to `nodes` by hostname, as a local provisioner makes it. */
const pinned = (...nodes: string[]): V1PersistentVolume => ({
  spec: {
    nodeAffinity: {
      required: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }] }],
      },
    },
  },
});
const claim: V1PersistentVolumeClaim = { spec: { volumeName: 'pvc-1' }, status: { phase: 'Bound' } };
const onNode = (nodeName: string): V1Pod => ({ spec: { nodeName, containers: [] } });

/** A reader over a world of volumes and nodes the test changes, counting the reads. */
function world(volumes: Record<string, V1PersistentVolume>, nodes: Set<string>) {
  const reads = { count: 0 };
  const reader: VolumeNodeReader = {
    volume: (name) => {
      reads.count++;
      const v = volumes[name];
      return v ? Promise.resolve(v) : Promise.reject(new Error(`no volume ${name}`));
    },
    nodeExists: (name) => {
      reads.count++;
      return Promise.resolve(nodes.has(name));
    },
  };
  return { reader, reads };
}

describe('volume nodes: a member volume pinned to a node that is gone', () => {
  it('reads the hostnames a local volume is pinned to; any other affinity pins it to no named node', () => {
    expect(pinnedNodes(pinned('node-b'))).toEqual(['node-b']);
    expect(pinnedNodes({ spec: {} })).toBeUndefined();
    const zonal: V1PersistentVolume = {
      spec: {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] },
            ],
          },
        },
      },
    };
    expect(pinnedNodes(zonal)).toBeUndefined();
  });

  it('names the node once it is deleted, while the Pod has no node; says nothing while it exists, and looks again later', async () => {
    let now = 0;
    const nodes = new Set(['node-a', 'node-b']);
    const { reader } = world({ 'pvc-1': pinned('node-b') }, nodes);
    const v = new VolumeNodes(reader, { now: () => now, maxAgeMs: 10_000 });
    expect(await v.check(claim, undefined)).toEqual({ againMs: 10_000 });
    nodes.delete('node-b');
    now += 10_000;
    expect(await v.check(claim, undefined)).toEqual({ lost: 'node-b' });
    // A Pending Pod (no node) is no different from none.
    expect(await v.check(claim, { spec: { containers: [] } })).toEqual({ lost: 'node-b' });
  });

  it('asks nothing while the Pod is on a node, or the claim not bound', async () => {
    const { reader, reads } = world({ 'pvc-1': pinned('node-b') }, new Set());
    const v = new VolumeNodes(reader);
    expect(await v.check(claim, onNode('node-b'))).toEqual({});
    expect(await v.check({ status: { phase: 'Pending' } }, undefined)).toEqual({});
    expect(await v.check(undefined, undefined)).toEqual({});
    expect(reads.count).toBe(0);
  });

  it('a read that fails says nothing new (no right to read Nodes, the API server away)', async () => {
    const { reader } = world({}, new Set());
    const v = new VolumeNodes(reader);
    expect(await v.check(claim, undefined)).toEqual({ againMs: 10_000 });
  });
});
