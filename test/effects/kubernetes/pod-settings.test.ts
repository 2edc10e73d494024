/** The manager's Pod settings reach every Pod it makes: a mirrored etcd image, pull Secrets, default requests. */
import type { V1Job, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../../api/v1alpha1/index.ts';
import { buildPod } from '../../../effects/kubernetes/build-pod.ts';
import { buildRestoreJob } from '../../../effects/kubernetes/build-restore.ts';
import { buildSnapshotDeleteJob, buildSnapshotJob } from '../../../effects/kubernetes/build-snapshot-job.ts';
import type { PodSettings } from '../../../effects/kubernetes/pod-settings.ts';
import { versionOfImage } from '../../../manager/observe.ts';
import { cluster, member } from './fixtures.ts';

const settings: PodSettings = {
  etcdImageRepository: 'mirror.example:5000/coreos/etcd',
  imagePullSecrets: ['mirror-pull'],
  memberResources: { requests: { cpu: '100m', memory: '256Mi' } },
  jobResources: { requests: { cpu: '10m', memory: '64Mi' } },
};
const snapshot = {
  metadata: { name: 'nightly', namespace: 'ns', uid: '0123456789abcdef' },
  spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'backups' } } },
} as EtcdSnapshot;
const restoreSource = { pvc: { claimName: 'backups', path: 'ns-demo-nightly.db' }, sha256: 'ab'.repeat(32) };
const podOf = (job: V1Job): V1PodSpec => job.spec!.template.spec!;

describe('member Pod with the manager settings', () => {
  it('runs etcd from the mirrored repository, tagged v<version>, and the version reads back from it', () => {
    const c = cluster();
    const etcd = buildPod(member(c), c, 'op:1', settings).spec?.containers[0];
    expect(etcd?.image).toBe(`mirror.example:5000/coreos/etcd:v${c.spec.version}`);
    expect(versionOfImage(etcd?.image)).toBe(c.spec.version);
  });

  it("restores a seed with the mirrored etcd image's etcdutl too", () => {
    const restored = cluster({ bootstrap: { restore: { source: restoreSource } } });
    const m = member(restored);
    const seed = { ...m, spec: { ...m.spec, restore: restoreSource } };
    const images = buildPod(seed, restored, 'op:1', settings).spec?.initContainers?.map((i) => i.image);
    expect(images).toContain(`mirror.example:5000/coreos/etcd:v${restored.spec.version}`);
    expect(images?.filter((i) => i?.startsWith('quay.io'))).toEqual([]);
  });

  it("keeps quay.io's images without settings", () => {
    const c = cluster();
    expect(buildPod(member(c), c).spec?.containers[0]?.image).toBe(`quay.io/coreos/etcd:v${c.spec.version}`);
  });

  it("carries the manager's pull Secrets after the podTemplate's, each once", () => {
    const plain = cluster();
    expect(buildPod(member(plain), plain, 'op:1', settings).spec?.imagePullSecrets).toEqual([{ name: 'mirror-pull' }]);
    const templated = cluster({
      podTemplate: { spec: { imagePullSecrets: [{ name: 'team' }, { name: 'mirror-pull' }] } },
    });
    expect(buildPod(member(templated), templated, 'op:1', settings).spec?.imagePullSecrets).toEqual([
      { name: 'team' },
      { name: 'mirror-pull' },
    ]);
    expect(buildPod(member(plain), plain).spec?.imagePullSecrets).toBeUndefined();
  });

  it("requests the manager's default resources when the cluster sets none; the cluster's win whole", () => {
    const plain = cluster();
    expect(buildPod(member(plain), plain, 'op:1', settings).spec?.containers[0]?.resources).toEqual({
      requests: { cpu: '100m', memory: '256Mi' },
    });
    const own = cluster({ resources: { limits: { memory: '1Gi' } } });
    expect(buildPod(member(own), own, 'op:1', settings).spec?.containers[0]?.resources).toEqual({
      limits: { memory: '1Gi' },
    });
  });
});

describe('snapshot and restore Jobs with the manager settings', () => {
  const jobs: [string, V1Job][] = [
    ['snapshot', buildSnapshotJob(snapshot, 'demo-0', 'op:1', cluster(), settings)],
    ['snapshot delete', buildSnapshotDeleteJob(snapshot, 'op:1', settings)],
    ['restore-verify', buildRestoreJob(cluster(), restoreSource, 'op:1', settings)],
  ];

  it.each(jobs)('%s Job: pulls with the Secrets and requests the Job resources', (_, job) => {
    const pod = podOf(job);
    expect(pod.imagePullSecrets).toEqual([{ name: 'mirror-pull' }]);
    expect(pod.containers.map((c) => c.resources)).toEqual([{ requests: { cpu: '10m', memory: '64Mi' } }]);
  });

  it("ignores the cluster's podTemplate pull Secrets: those are for the members' own images", () => {
    const templated = cluster({ podTemplate: { spec: { imagePullSecrets: [{ name: 'team' }] } } });
    expect(podOf(buildSnapshotJob(snapshot, 'demo-0', 'op:1', templated, settings)).imagePullSecrets).toEqual([
      { name: 'mirror-pull' },
    ]);
  });
});
