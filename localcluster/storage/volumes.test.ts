import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseQuantity } from './quantity.ts';
import { plan as planFor, SIZED_SCOPE, volumeFor } from './volumes.ts';

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

  it('with WaitForFirstConsumer provisions only once a node is selected, and binds the volume to that node', () => {
    const wffc = [{ ...classes[0]!, volumeBindingMode: 'WaitForFirstConsumer' }];
    expect(planFor({ claims: [claim()], volumes: [], classes: wffc, root })).toEqual([]);
    const selected = claim();
    selected.metadata!.annotations = { 'volume.kubernetes.io/selected-node': 'node-b' };
    const [action] = planFor({ claims: [selected], volumes: [], classes: wffc, root });
    expect(action?.type === 'create' && action.volume.spec?.nodeAffinity).toEqual({
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-b'] }] },
        ],
      },
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

describe('storage plan: the sized class (tmpfs volumes a Pod sees the size of)', () => {
  const sizedClasses = [{ metadata: { name: 'local-sized' }, provisioner: SIZED_SCOPE.provisioner }];
  const sizedClaim = (size: string) => claim(size, { storageClassName: 'local-sized' });
  const sizedVolume = (size: string, phase = 'Bound') => ({
    ...volumeFor(sizedClaim(size), root, SIZED_SCOPE.provisioner),
    status: { phase },
  });
  const plan = (claims: V1PersistentVolumeClaim[], volumes: V1PersistentVolume[], mounted: string[] = ['c1']) =>
    planFor({
      claims,
      volumes,
      classes: sizedClasses,
      root,
      provisioner: SIZED_SCOPE.provisioner,
      sized: true,
      mounted,
    });

  it('provisions a tmpfs of the claimed size before the volume', () => {
    expect(plan([sizedClaim('64Mi')], [], [])).toMatchObject([
      {
        type: 'create',
        dir: '/data/volumes/c1',
        bytes: 64 * 2 ** 20,
        volume: { spec: { capacity: { storage: '64Mi' } } },
      },
    ]);
  });

  it('grows by remounting its directory at the new size, then the volume and claim say so', () => {
    expect(plan([sizedClaim('128Mi')], [sizedVolume('64Mi')])).toEqual([
      expect.objectContaining({ type: 'grow', size: '128Mi', dir: '/data/volumes/c1', bytes: 128 * 2 ** 20 }),
    ]);
  });

  it('mounts again, at the volume size, a volume whose tmpfs is gone (a restart), and only then grows it', () => {
    expect(plan([sizedClaim('64Mi')], [sizedVolume('64Mi')], [])).toEqual([
      { type: 'mount', dir: '/data/volumes/c1', bytes: 64 * 2 ** 20 },
    ]);
    expect(plan([sizedClaim('128Mi')], [sizedVolume('64Mi')], []).map((a) => a.type)).toEqual(['mount', 'grow']);
  });

  it('a volume mounted at its size needs nothing; a released one is deleted (the provisioner unmounts it first)', () => {
    expect(plan([sizedClaim('64Mi')], [sizedVolume('64Mi')])).toEqual([]);
    expect(plan([], [sizedVolume('64Mi', 'Released')])).toEqual([
      { type: 'delete', name: 'pvc-c1', dir: '/data/volumes/c1' },
    ]);
  });

  it('the default class stays plain directories: no size, no mount', () => {
    const [create] = planFor({ claims: [claim('64Mi')], volumes: [], classes, root });
    expect(create).not.toHaveProperty('bytes');
    expect(planFor({ claims: [claim('2Gi')], volumes: [bound(claim('1Gi'))], classes, root })[0]).not.toHaveProperty(
      'dir',
    );
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
