/**
 * The Kubernetes handlers that take things away, and the writers: deleteMember leaves the
 * EtcdMember to its finalizer, releaseFinalizer lets it go, setDormant, status and Events, a
 * foreign object is refused, and deleting the EtcdCluster takes everything with it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { EventRecorder, kubernetesHandlers as h, patchClusterStatus } from '../../effects/kubernetes/index.ts';
import type { KubeContext } from '../../effects/kubernetes/index.ts';
import { FINALIZER } from '../../effects/kubernetes/meta.ts';
import { EffectError } from '../../effects/types.ts';
import { seedInitialCluster } from '../../machines/policy.ts';
import {
  clientsOf,
  contextFor,
  createCluster,
  createNamespace,
  deleteTestNamespace,
  until,
  untilGone,
} from '../effects/kubernetes/e2e-context.ts';
import { describedEvents } from './kube.ts';

const ns = `effects-life-${process.pid}`;
const kube = clientsOf(inject('kubeconfig'));
let cluster: EtcdCluster;
const ctx = (): KubeContext => contextFor(kube, cluster);
const memberRef = (name: string) => ({
  group: 'etcd-operator.dev',
  version: 'v1alpha1',
  namespace: ns,
  plural: 'etcdmembers',
  name,
});
const readMember = async (name: string) => (await kube.custom.getNamespacedCustomObject(memberRef(name))) as EtcdMember;
const params = (member: string, ordinal: number) => ({
  member,
  ordinal,
  bootstrap: ordinal === 0,
  initialCluster: seedInitialCluster(ctx().cluster, member),
  version: '3.6.16',
});

beforeAll(async () => {
  await createNamespace(kube.core, ns);
  cluster = await createCluster(kube.custom, ns, 'life', { replicas: 2 });
  await h.ensureServices.run({ cluster: 'life' }, ctx());
  for (const [i, name] of ['life-0', 'life-1'].entries()) {
    await h.createMember.run(params(name, i), ctx());
    await h.createPVC.run({ member: name }, ctx());
  }
  await h.createPod.run({ member: 'life-0' }, ctx());
});

afterAll(async () => {
  await deleteTestNamespace(kube, ns);
});

describe('Kubernetes handlers take members away', () => {
  it('deleteMember of a member that does not exist is done', async () => {
    expect(await h.deleteMember.run({ member: 'life-9' }, ctx())).toEqual({});
    expect(await h.deleteMember.recover({ member: 'life-9' }, ctx())).toEqual({ done: true, result: {} });
  });

  it('setDormant twice marks the members once, skips missing ones, and recover agrees; waking sets the CA digest too', async () => {
    const p = { members: ['life-0', 'life-1', 'life-9'], dormant: true };
    expect(await h.setDormant.recover(p, ctx())).toEqual({ done: false });
    expect(await h.setDormant.run(p, ctx())).toEqual({ members: ['life-0', 'life-1'] });
    const rv = (await readMember('life-0')).metadata.resourceVersion;
    expect(await h.setDormant.run(p, ctx())).toEqual({ members: ['life-0', 'life-1'] });
    expect((await readMember('life-0')).metadata.resourceVersion).toBe(rv);
    expect(await h.setDormant.recover(p, ctx())).toEqual({ done: true, result: { members: ['life-0', 'life-1'] } });
    // Waking with a CA digest sets both; recover reads both; a run with nothing to change writes nothing.
    const wake = { members: ['life-0', 'life-1'], dormant: false, trust: '0123456789abcdef' };
    expect(await h.setDormant.recover(wake, ctx())).toEqual({ done: false });
    await h.setDormant.run(wake, ctx());
    const woken = await readMember('life-1');
    expect(woken.spec).toMatchObject({ dormant: false, trust: '0123456789abcdef' });
    expect(await h.setDormant.recover(wake, ctx())).toEqual({ done: true, result: { members: ['life-0', 'life-1'] } });
    expect(await h.setDormant.recover({ ...wake, trust: 'fedcba9876543210' }, ctx())).toEqual({ done: false });
    expect(await h.setDormant.run({ members: ['life-1'], dormant: false }, ctx())).toEqual({ members: ['life-1'] });
    expect((await readMember('life-1')).metadata.resourceVersion).toBe(woken.metadata.resourceVersion);
  });

  it('setMemberVersion sets one member to a new etcd version once; a member that is gone is refused for good', async () => {
    const p = { member: 'life-0', version: '3.5.35' };
    expect(await h.setMemberVersion.recover(p, ctx())).toEqual({ done: false });
    expect(await h.setMemberVersion.run(p, ctx())).toEqual({});
    const rv = (await readMember('life-0')).metadata.resourceVersion;
    expect(await h.setMemberVersion.run(p, ctx())).toEqual({});
    expect((await readMember('life-0')).metadata.resourceVersion).toBe(rv);
    expect((await readMember('life-0')).spec.version).toBe('3.5.35');
    expect(await h.setMemberVersion.recover(p, ctx())).toEqual({ done: true, result: {} });
    await expect(h.setMemberVersion.run({ member: 'life-9', version: '3.5.35' }, ctx())).rejects.toMatchObject({
      code: 'ERR_SET_MEMBER_VERSION',
      retryable: false,
    });
  });

  it('deleteMember leaves the member to its finalizer; releaseFinalizer lets it go and its PVC follows', async () => {
    expect(await h.deleteMember.recover({ member: 'life-1' }, ctx())).toEqual({ done: false });
    await h.deleteMember.run({ member: 'life-1' }, ctx());
    await h.deleteMember.run({ member: 'life-1' }, ctx());
    const deleting = await readMember('life-1');
    expect(deleting.metadata.deletionTimestamp).toBeDefined();
    expect(deleting.metadata.finalizers).toContain(FINALIZER);
    expect(await h.deleteMember.recover({ member: 'life-1' }, ctx())).toEqual({ done: true, result: {} });

    expect(await h.releaseFinalizer.recover({ member: 'life-1' }, ctx())).toEqual({ done: false });
    expect(await h.releaseFinalizer.run({ member: 'life-1' }, ctx())).toEqual({});
    expect(await h.releaseFinalizer.run({ member: 'life-1' }, ctx())).toEqual({});
    expect(await h.releaseFinalizer.recover({ member: 'life-1' }, ctx())).toEqual({ done: true, result: {} });
    await untilGone('EtcdMember life-1', () => readMember('life-1'));
    await untilGone('PVC data-life-1', () =>
      kube.core.readNamespacedPersistentVolumeClaim({ name: 'data-life-1', namespace: ns }),
    );
  });

  it('releaseFinalizer keeps a finalizer that is not ours', async () => {
    const other = 'example.com/keep';
    await kube.custom.patchNamespacedCustomObject({
      ...memberRef('life-0'),
      body: [{ op: 'add', path: '/metadata/finalizers/-', value: other }],
    });
    await h.releaseFinalizer.run({ member: 'life-0' }, ctx());
    expect((await readMember('life-0')).metadata.finalizers).toEqual([other]);
    await kube.custom.patchNamespacedCustomObject({
      ...memberRef('life-0'),
      body: [{ op: 'replace', path: '/metadata/finalizers', value: [FINALIZER] }],
    });
  });
});

describe('Kubernetes handlers and writers', () => {
  it('a Service of that name that is not ours is refused, not adopted', async () => {
    const other = await createCluster(kube.custom, ns, 'taken');
    await kube.core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'taken-client' }, spec: { ports: [{ port: 80 }] } },
    });
    const err = await h.ensureServices.run({ cluster: 'taken' }, contextFor(kube, other)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EffectError);
    expect(err).toMatchObject({ code: 'ERR_ENSURE_SERVICES_FOREIGN', retryable: false });
  });

  it("createUpgradeSnapshot makes the roll's EtcdSnapshot once, unowned; one of that name that is not the roll's is refused", async () => {
    const p = { cluster: 'life', name: 'life-pre-v3-6-17', version: '3.6.17' };
    // Without spec.upgrade.snapshot there is nothing to take (the machine goes on without one).
    await expect(h.createUpgradeSnapshot.run(p, ctx())).rejects.toMatchObject({ code: 'ERR_CREATE_SNAPSHOT' });
    await kube.custom.patchNamespacedCustomObject(
      {
        group: 'etcd-operator.dev',
        version: 'v1alpha1',
        namespace: ns,
        plural: 'etcdclusters',
        name: 'life',
        body: { spec: { upgrade: { snapshot: { destination: { pvc: { claimName: 'backups' } } } } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await h.createUpgradeSnapshot.recover(p, ctx())).toEqual({ done: false });
    const { uid } = await h.createUpgradeSnapshot.run(p, ctx());
    expect(await h.createUpgradeSnapshot.run(p, ctx())).toEqual({ uid });
    expect(await h.createUpgradeSnapshot.recover(p, ctx())).toEqual({ done: true, result: { uid } });
    const made = (await kube.custom.getNamespacedCustomObject({
      group: 'etcd-operator.dev',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'etcdsnapshots',
      name: p.name,
    })) as EtcdSnapshot;
    expect(made.spec).toMatchObject({ clusterRef: { name: 'life' }, destination: { pvc: { claimName: 'backups' } } });
    expect(made.metadata.ownerReferences ?? []).toEqual([]);
    // The same name for another version is someone else's: never taken for this roll.
    await expect(h.createUpgradeSnapshot.run({ ...p, version: '3.6.18' }, ctx())).rejects.toMatchObject({
      code: 'ERR_CREATE_SNAPSHOT_FOREIGN',
      retryable: false,
    });
  });

  it('patchClusterStatus writes once and skips a status that did not change', async () => {
    const status = { readyMembers: 1, selector: 'etcd-operator.dev/cluster=life' };
    expect(await patchClusterStatus(ctx(), status)).toEqual({ changed: true });
    expect(await patchClusterStatus(ctx(), status)).toEqual({ changed: false });
    const stored = (await kube.custom.getNamespacedCustomObject({
      ...memberRef('life'),
      plural: 'etcdclusters',
    })) as EtcdCluster;
    expect(stored.status).toMatchObject(status);
  });

  it('kubectl describe lists the Events in the order they happened, within one second too, counting a repeat of the last', async () => {
    const { namespace = '', name = '', uid = '' } = cluster.metadata;
    const regarding = { apiVersion: 'etcd-operator.dev/v1alpha1', kind: 'EtcdCluster', namespace, name, uid };
    const step = (i: number) => ({
      regarding,
      type: 'Normal' as const,
      reason: `Step${i}`,
      note: `step ${i}`,
      action: 'Observe',
    });
    const events = new EventRecorder();
    // One second for all: kubectl sorts by lastTimestamp, which has whole seconds.
    const second = new Date();
    for (let i = 1; i <= 15; i++) await events.record(ctx(), step(i), second);
    const counted = [await events.record(ctx(), step(15), second), await events.record(ctx(), step(15), second)];
    await events.record(ctx(), step(3), second);

    expect(counted.map((c) => c.count)).toEqual([2, 3]);
    const described = await describedEvents('etcdcluster', name, ns);
    expect(described.map((e) => e.reason)).toEqual([...Array.from({ length: 15 }, (_, i) => `Step${i + 1}`), 'Step3']);
    expect(described[14]?.age).toMatch(/\(x3 over \d+s\)$/);
    expect(described[15]).toMatchObject({ type: 'Normal', from: 'etcd-operator.dev/manager', message: 'step 3' });
  });

  it('deleting the EtcdCluster takes members, Pods, PVCs and Services with it once finalizers are released', async () => {
    await kube.custom.deleteNamespacedCustomObject({
      group: 'etcd-operator.dev',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'etcdclusters',
      name: 'life',
    });
    await until('life-0 deleting', async () =>
      (await readMember('life-0')).metadata.deletionTimestamp ? true : undefined,
    );
    await h.releaseFinalizer.run({ member: 'life-0' }, ctx());
    await untilGone('EtcdMember life-0', () => readMember('life-0'));
    await untilGone('Pod life-0', () => kube.core.readNamespacedPod({ name: 'life-0', namespace: ns }));
    await untilGone('PVC data-life-0', () =>
      kube.core.readNamespacedPersistentVolumeClaim({ name: 'data-life-0', namespace: ns }),
    );
    await untilGone('Service life', () => kube.core.readNamespacedService({ name: 'life', namespace: ns }));
    await untilGone('Service life-client', () =>
      kube.core.readNamespacedService({ name: 'life-client', namespace: ns }),
    );
    await untilGone('EtcdCluster life', () =>
      kube.custom.getNamespacedCustomObject({ ...memberRef('life'), plural: 'etcdclusters' }),
    );
  });
});
