/**
 * Growing a cluster's volumes on the local cluster with the manager, as a user meets it: a
 * 3-member cluster on the sized class (tmpfs volumes whose size a Pod sees) at 256Mi (etcd's WAL
 * alone preallocates two 64 MB segments: at 64Mi a member raced its own WAL for space, and a seed
 * that lost died at its first commit and came back with no members), raised to
 * 512Mi: every claim asks for and shows 512Mi, each member Pod sees 512Mi on its data mount
 * (statfs run inside the Pod's mount namespace, entered by the etcd process's pid), the same
 * members and Pods go on (none replaced or restarted), and every key reads back. Shrinking is
 * refused by the API server with its message; a StorageClass that does not allow expansion is
 * reported with what to do, and a later size is applied once the class allows it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions, StorageV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { containerPid } from './container-process.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';

const run = promisify(execFile);
const hasNode = inject('clusterHasNode');
const env = withManager('grow');
const { ns, kube } = env;
const Mi = 2 ** 20;
const CLASS = 'local-sized';

/** The size of the file system at /var/lib/etcd as the Pod's etcd process sees it (its mount namespace). */
async function seenInPod(pod: V1Pod): Promise<number> {
  // Through /proc/<pid>/root (its root): the etcd image has no `stat` of its own.
  const { stdout } = await run('stat', ['-f', '-c', '%b %S', `/proc/${containerPid(pod, 'etcd')}/root/var/lib/etcd`]);
  const [blocks = 0, size = 0] = stdout.trim().split(' ').map(Number);
  return blocks * size;
}

describe.skipIf(!hasNode)('manager: volume expansion', () => {
  let storage: StorageV1Api;
  env.hooks();
  beforeAll(() => {
    storage = kube.kc.makeApiClient(StorageV1Api);
  });
  afterAll(async () => {
    if (storage) await expansion(true).catch(() => undefined);
  });

  /** Sets allowVolumeExpansion on the sized class (a merge patch, as kubectl patch does). */
  const expansion = (allow: boolean) =>
    storage.patchStorageClass(
      { name: CLASS, body: { allowVolumeExpansion: allow } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  const pods = async (name: string): Promise<V1Pod[]> =>
    (await kube.core.listNamespacedPod({ namespace: ns, labelSelector: `etcd-operator.dev/cluster=${name}` })).items
      .filter((p) => !p.metadata?.deletionTimestamp)
      .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const claims = async (name: string) =>
    (
      await kube.core.listNamespacedPersistentVolumeClaim({
        namespace: ns,
        labelSelector: `etcd-operator.dev/cluster=${name}`,
      })
    ).items.map((c) => ({
      name: c.metadata?.name,
      requested: c.spec?.resources?.requests?.['storage'],
      capacity: c.status?.capacity?.['storage'],
    }));
  const condition = async (c: ClusterUnderTest, type: string) =>
    (await c.get()).status?.conditions?.find((x) => x.type === type);
  const events = async (name: string, reason: string) =>
    (
      await kube.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: `involvedObject.name=${name},involvedObject.kind=EtcdCluster`,
      })
    ).items.filter((e) => e.reason === reason);

  it(
    '256Mi -> 512Mi: every claim shows it, every member Pod sees it, no member replaced, every key read back',
    { timeout: 420_000 },
    async () => {
      const grow = new ClusterUnderTest(kube, ns, 'grow');
      await grow.create({ replicas: 3, storage: { size: '256Mi', storageClassName: CLASS } });
      await grow.settled(3);
      await grow.write('before', 50);
      const before = await grow.verify(3);
      const podsBefore = await pods('grow');
      expect(podsBefore).toHaveLength(3);
      for (const pod of podsBefore) expect(await seenInPod(pod)).toBe(256 * Mi);

      const t0 = performance.now();
      await grow.patchSpec({ storage: { size: '512Mi' } });
      const expanded = await until(
        'VolumesExpanded True',
        async () => {
          const c = await condition(grow, 'VolumesExpanded');
          return c?.status === 'True' ? c : undefined;
        },
        240_000,
      );
      console.log(`volumes grown 256Mi -> 512Mi in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      expect(expanded.message).toBe("every member's volume claim shows 512Mi: grow-0 done, grow-1 done, grow-2 done");
      const progress = await events('grow', 'ResizingVolumes');
      expect(progress.map((e) => e.message)).toContainEqual(
        expect.stringMatching(/^growing volumes to 512Mi: grow-0 /),
      );
      await grow.settled(3);

      expect(await claims('grow')).toEqual(
        ['grow-0', 'grow-1', 'grow-2'].map((m) => ({ name: `data-${m}`, requested: '512Mi', capacity: '512Mi' })),
      );
      const podsAfter = await pods('grow');
      // The same Pods (uids), so no member was restarted or replaced: the file system grew under them.
      expect(podsAfter.map((p) => p.metadata?.uid)).toEqual(podsBefore.map((p) => p.metadata?.uid));
      for (const pod of podsAfter) expect(await seenInPod(pod)).toBe(512 * Mi);
      expect(await grow.verify(3)).toEqual(before);
      expect(await grow.readBack('before', 50)).toBe(50);
      await grow.write('after', 10);
      expect(await grow.readBack('after', 10)).toBe(10);

      // Shrinking: refused by the API server, nothing changes.
      await expect(grow.patchSpec({ storage: { size: '256Mi' } })).rejects.toThrow(
        /storage.size cannot shrink: a PersistentVolumeClaim can only grow/,
      );
      expect((await grow.get()).spec.storage.size).toBe('512Mi');
    },
  );

  it(
    'a StorageClass that does not allow expansion is reported, naming it and what to do; a later size applies once it does',
    { timeout: 420_000 },
    async () => {
      const fixed = new ClusterUnderTest(kube, ns, 'fixed');
      await fixed.create({ replicas: 1, storage: { size: '256Mi', storageClassName: CLASS } });
      await fixed.settled(1);
      await fixed.write('before', 10);
      await expansion(false);
      await fixed.patchSpec({ storage: { size: '384Mi' } });
      const refused = await until(
        'VolumesExpanded False (ExpansionNotAllowed)',
        async () => {
          // ResizingVolumes comes first, while the claim is asked.
          const c = await condition(fixed, 'VolumesExpanded');
          return c?.status === 'False' && c.reason === 'ExpansionNotAllowed' ? c : undefined;
        },
        120_000,
      );
      expect(refused.reason).toBe('ExpansionNotAllowed');
      expect(refused.message).toContain(
        `storage.size 384Mi is not applied to the members' volumes: PersistentVolumeClaim data-fixed-0 cannot grow to 384Mi: StorageClass ${CLASS} does not allow volume expansion. Set allowVolumeExpansion: true on it`,
      );
      const c = await fixed.get();
      expect(c.status?.observed?.step).toBe('VolumesRefused');
      expect(c.status?.conditions?.find((x) => x.type === 'Available')?.status).toBe('True');
      // The Event is written after the step's status, so it may trail the condition a little.
      const warning = await until(
        'a VolumesRefused Event',
        async () => (await events('fixed', 'VolumesRefused'))[0],
        30_000,
      );
      expect(warning.type).toBe('Warning');
      expect(await claims('fixed')).toEqual([{ name: 'data-fixed-0', requested: '256Mi', capacity: '256Mi' }]);

      // The class allows it now; a new size is tried at once (the refused one after 5 minutes).
      await expansion(true);
      // The API server's admission reads classes from its cache: wait until it takes a larger claim (dry run).
      await until('the API server allows the claim to grow', () =>
        kube.core
          .patchNamespacedPersistentVolumeClaim(
            {
              name: 'data-fixed-0',
              namespace: ns,
              dryRun: 'All',
              body: { spec: { resources: { requests: { storage: '512Mi' } } } },
            },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          )
          .then(() => true),
      );
      await fixed.patchSpec({ storage: { size: '512Mi' } });
      await until(
        'VolumesExpanded True',
        async () => ((await condition(fixed, 'VolumesExpanded'))?.status === 'True' ? true : undefined),
        240_000,
      );
      const [pod] = await pods('fixed');
      expect(pod && (await seenInPod(pod))).toBe(512 * Mi);
      await fixed.settled(1);
      expect(await fixed.readBack('before', 10)).toBe(10);
    },
  );
});
