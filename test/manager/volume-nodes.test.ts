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
/** A Pod bound to `nodeName`; Ready or not. */
const onNode = (nodeName: string, ready = false): V1Pod => ({
  spec: { nodeName, containers: [] },
  status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});
/** A Pending claim; with `node`, the one kube-scheduler selected for its first Pod. */
const pending = (node?: string): V1PersistentVolumeClaim => ({
  metadata: node ? { annotations: { 'volume.kubernetes.io/selected-node': node } } : {},
  spec: {},
  status: { phase: 'Pending' },
});

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

  it('asks nothing while the Pod runs, or while a Pending claim names no node', async () => {
    const { reader, reads } = world({ 'pvc-1': pinned('node-b') }, new Set());
    const v = new VolumeNodes(reader);
    expect(await v.check(claim, onNode('node-b', true))).toEqual({});
    expect(await v.check(pending(), undefined)).toEqual({});
    expect(await v.check(pending(), { spec: { containers: [] } })).toEqual({});
    expect(await v.check(undefined, undefined)).toEqual({});
    expect(reads.count).toBe(0);
  });

  it('a Pod bound to the deleted node is no Pod: the volume pinned there is lost without waiting for the Pod to go', async () => {
    const nodes = new Set(['node-a']);
    const { reader } = world({ 'pvc-1': pinned('node-b') }, nodes);
    const v = new VolumeNodes(reader);
    expect(await v.check(claim, onNode('node-b'))).toEqual({ lost: 'node-b' });
  });

  it('a volume pinned to a node in a zone, not by name, is never lost by name; nothing to look at again', async () => {
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
    const v = new VolumeNodes(world({ 'pvc-1': zonal }, new Set()).reader);
    expect(await v.check(claim, undefined)).toEqual({});
  });
});

describe('volume nodes: a Pending claim whose selected node is gone', () => {
  it('names the node selected for the claim once it is deleted; says nothing while it exists, and looks again later', async () => {
    let now = 0;
    const nodes = new Set(['node-a', 'node-c']);
    const { reader, reads } = world({}, nodes);
    const v = new VolumeNodes(reader, { now: () => now, maxAgeMs: 10_000 });
    // kube-scheduler chose node-c for the Pod, which waits unbound for its volume to be made there.
    const unbound: V1Pod = { spec: { containers: [] }, status: { phase: 'Pending' } };
    expect(await v.check(pending('node-c'), unbound)).toEqual({ againMs: 10_000 });
    nodes.delete('node-c');
    // A read stands for its age: the node deleted meanwhile is seen at the next read.
    expect(await v.check(pending('node-c'), unbound)).toEqual({ againMs: 10_000 });
    expect(reads.count).toBe(1);
    now += 10_000;
    expect(await v.check(pending('node-c'), unbound)).toEqual({ lost: 'node-c' });
    expect(await v.check(pending('node-c'), undefined)).toEqual({ lost: 'node-c' });
    // The provisioner gives the node up (the annotation removed): the claim names no node, nothing is lost.
    expect(await v.check(pending(), unbound)).toEqual({});
  });

  it('a read that fails keeps what was read before', async () => {
    let now = 0;
    let fail = false;
    const reader: VolumeNodeReader = {
      volume: () => Promise.reject(new Error('no volumes here')),
      nodeExists: () => (fail ? Promise.reject(new Error('forbidden')) : Promise.resolve(false)),
    };
    const v = new VolumeNodes(reader, { now: () => now, maxAgeMs: 10_000 });
    expect(await v.check(pending('node-c'), undefined)).toEqual({ lost: 'node-c' });
    fail = true;
    now += 20_000;
    expect(await v.check(pending('node-c'), undefined)).toEqual({ lost: 'node-c' });
    v.sweep();
    expect(await v.check(pending('node-c'), undefined)).toEqual({ againMs: 10_000 });
  });
  it('a read that fails says nothing new (no right to read Nodes, the API server away)', async () => {
    const { reader } = world({}, new Set());
    const v = new VolumeNodes(reader);
    expect(await v.check(claim, undefined)).toEqual({ againMs: 10_000 });
  });
});
