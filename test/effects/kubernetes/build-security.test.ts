/** Every Pod the operator makes passes the `restricted` Pod Security Standard, as one non-root user. */
import type { V1Job, V1PodSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../../api/v1alpha1/index.ts';
import { buildPod } from '../../../effects/kubernetes/build-pod.ts';
import { buildRestoreJob } from '../../../effects/kubernetes/build-restore.ts';
import { RUN_AS_ID } from '../../../effects/kubernetes/build-security.ts';
import { buildSnapshotDeleteJob, buildSnapshotJob } from '../../../effects/kubernetes/build-snapshot-job.ts';
import { cluster, member } from './fixtures.ts';
import { restrictedViolations } from './restricted.ts';

const snapshot = (destination: EtcdSnapshot['spec']['destination']): EtcdSnapshot =>
  ({
    metadata: { name: 'nightly', namespace: 'ns', uid: '0123456789abcdef' },
    spec: { clusterRef: { name: 'demo' }, destination },
  }) as EtcdSnapshot;
const s3 = {
  bucket: 'backups',
  endpoint: 'https://s3.example',
  forcePathStyle: true,
  credentialsSecretRef: { name: 'creds', accessKeyIDKey: 'id', secretAccessKeyKey: 'secret' },
  caBundle: { configMapName: 's3-ca', key: 'ca.crt' },
};
const restoreSource = { pvc: { claimName: 'backups', path: 'ns-demo-nightly.db' }, sha256: 'ab'.repeat(32) };

/** A member Pod of every kind: with the data check, in memory (no check), and a restored seed (three more init containers). */
function memberPods(): [string, V1PodSpec][] {
  const c = cluster();
  const restored = cluster({ bootstrap: { restore: { source: restoreSource } } });
  const seed = member(restored);
  const memory = cluster({ storage: { size: '64Mi', medium: 'Memory' } });
  return [
    ['member', buildPod(member(c, 1, false), c).spec!],
    ['member in memory', buildPod(member(memory), memory).spec!],
    ['restored seed', buildPod({ ...seed, spec: { ...seed.spec, restore: restoreSource } }, restored).spec!],
  ];
}

function jobPods(): [string, V1PodSpec][] {
  const image = 'ghcr.io/etcd-operator/etcd-operator:1';
  const jobs: [string, V1Job][] = [
    ['snapshot to S3', buildSnapshotJob(snapshot({ s3: { ...s3, keyPrefix: 'etcd/' } }), 'demo-1', image)],
    ['snapshot to a PVC', buildSnapshotJob(snapshot({ pvc: { claimName: 'backups' } }), 'demo-1', image)],
    ['delete', buildSnapshotDeleteJob(snapshot({ pvc: { claimName: 'backups' } }), image)],
    ['restore-verify from S3', buildRestoreJob(cluster(), { s3: { ...s3, key: 'k' } }, image)],
    ['restore-verify from a PVC', buildRestoreJob(cluster(), restoreSource, image)],
  ];
  return jobs.map(([name, job]) => [name, job.spec!.template.spec!]);
}

describe('Pod security: every Pod the operator makes', () => {
  it.each([...memberPods(), ...jobPods()])('%s passes the restricted profile', (_, spec) => {
    expect(restrictedViolations(spec)).toEqual([]);
  });

  it.each([...memberPods(), ...jobPods()])(
    '%s runs every container as uid and gid 65532, its volumes the group’s (fsGroup)',
    (_, spec) => {
      expect(spec.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: RUN_AS_ID,
        runAsGroup: RUN_AS_ID,
        fsGroup: RUN_AS_ID,
        fsGroupChangePolicy: 'OnRootMismatch',
        seccompProfile: { type: 'RuntimeDefault' },
      });
      for (const c of [...(spec.initContainers ?? []), ...spec.containers])
        expect(c.securityContext, c.name).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    },
  );

  it.each([...memberPods(), ...jobPods()])(
    '%s mounts no service account token: nothing in it calls the API server',
    (_, spec) => {
      expect(spec.automountServiceAccountToken).toBe(false);
    },
  );

  it('a restored seed has every init container covered: fetch, restore, finish, then the data check', () => {
    const spec = memberPods()[2]![1];
    expect(spec.initContainers?.map((c) => c.name)).toEqual([
      'restore-fetch',
      'restore',
      'restore-finish',
      'check-data',
    ]);
  });

  it("a podTemplate's securityContext fields win over ours, the others stay", () => {
    const c = cluster({ podTemplate: { spec: { securityContext: { runAsUser: 1000, supplementalGroups: [5] } } } });
    expect(buildPod(member(c), c).spec?.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: RUN_AS_ID,
      fsGroup: RUN_AS_ID,
      fsGroupChangePolicy: 'OnRootMismatch',
      seccompProfile: { type: 'RuntimeDefault' },
      supplementalGroups: [5],
    });
  });

  it('the checker itself catches what the old Pods had: an init container run as root', () => {
    const c = cluster();
    const spec = buildPod(member(c), c).spec!;
    const old = {
      ...spec,
      initContainers: spec.initContainers?.map((x) => ({ ...x, securityContext: { runAsUser: 0 } })),
    };
    expect(restrictedViolations(old)).toEqual([
      'initContainers[check-data]: allowPrivilegeEscalation is not false',
      'initContainers[check-data]: runAsUser 0',
      'initContainers[check-data]: capabilities do not drop ALL',
    ]);
    expect(restrictedViolations({ containers: [{ name: 'x' }] })).toHaveLength(4);
  });
});
