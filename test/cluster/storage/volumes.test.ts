import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseQuantity } from './quantity.ts';
import { plan as planFor, volumeFor } from './volumes.ts';

const classes = [{ metadata: { name: 'local' }, provisioner: 'etcd-operator.dev/local-process' }];
const plan = (claims: V1PersistentVolumeClaim[], volumes: V1PersistentVolume[], root: string) =>
  planFor({ claims, volumes, classes, root });

const root = '/data';

function claim(size = '1Gi', extra: Partial<V1PersistentVolumeClaim['spec']> = {}): V1PersistentVolumeClaim {
  return {
    metadata: { name: 'data-etcd-0', namespace: 'db', uid: 'c1' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'local',
      resources: { requests: { storage: size } },
      ...extra,
    },
  };
}

function bound(c: V1PersistentVolumeClaim, phase = 'Bound'): V1PersistentVolume {
  return { ...volumeFor(c, root), status: { phase } };
}

describe('storage plan', () => {
  it('provisions a volume per claim: its directory, its size, its modes, bound to the claim', () => {
    const [action] = plan([claim()], [], root);
    expect(action?.type).toBe('create');
    if (action?.type !== 'create') return;
    expect(action.dir).toBe('/data/volumes/c1');
    expect(action.volume.metadata?.name).toBe('pvc-c1');
    expect(action.volume.spec).toMatchObject({
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'local',
      persistentVolumeReclaimPolicy: 'Delete',
      hostPath: { path: '/data/volumes/c1' },
      claimRef: { name: 'data-etcd-0', namespace: 'db', uid: 'c1' },
    });
  });

  it('does nothing more once the claim has its volume', () => {
    expect(plan([claim()], [bound(claim())], root)).toEqual([]);
  });

  it('leaves claims of a class another provisioner serves alone', () => {
    expect(plan([claim('1Gi', { storageClassName: 'other' })], [], root)).toEqual([]);
    const annotated = claim('1Gi', { storageClassName: 'other' });
    annotated.metadata = {
      ...annotated.metadata,
      annotations: { 'volume.kubernetes.io/storage-provisioner': 'etcd-operator.dev/local-process' },
    };
    expect(plan([annotated], [], root)).toHaveLength(1);
  });

  it('leaves claims that ask for a particular volume alone', () => {
    expect(plan([claim('1Gi', { volumeName: 'mine' })], [], root)).toEqual([]);
  });

  it('deletes a released volume with its data directory', () => {
    expect(plan([], [bound(claim(), 'Released')], root)).toEqual([
      { type: 'delete', name: 'pvc-c1', dir: '/data/volumes/c1' },
    ]);
  });

  it('never deletes a volume someone else provisioned', () => {
    const theirs: V1PersistentVolume = {
      metadata: { name: 'x' },
      spec: { persistentVolumeReclaimPolicy: 'Delete' },
      status: { phase: 'Released' },
    };
    expect(plan([], [theirs], root)).toEqual([]);
  });

  it('removes a directory that neither a claim nor a volume refers to', () => {
    const c = claim();
    expect(planFor({ claims: [c], volumes: [], classes, root, dirs: ['c1', 'gone'] })).toEqual([
      expect.objectContaining({ type: 'create' }),
      { type: 'sweep', dir: '/data/volumes/gone' },
    ]);
  });

  it('grows the volume when the claim asks for more', () => {
    const bigger = claim('2Gi');
    expect(plan([bigger], [bound(claim('1Gi'))], root)).toMatchObject([
      { type: 'grow', volume: 'pvc-c1', size: '2Gi' },
    ]);
  });
});

describe('quantities', () => {
  it('compare across binary and decimal suffixes', () => {
    expect(parseQuantity('1Gi')).toBe(2 ** 30);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('1.5Mi')).toBe(1.5 * 2 ** 20);
    expect(parseQuantity('2e3')).toBe(2000);
    expect(() => parseQuantity('1Qi')).toThrow(/not a Kubernetes quantity/);
  });
});
