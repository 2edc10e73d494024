/**
 * Restoring a cluster from a snapshot: where the snapshot is (an EtcdSnapshot resolved to its
 * stored object, or a source given directly), the Job that reads it whole and checks it before
 * any member exists, and the seed's init containers that fetch, check and restore it into the
 * data directory before etcd first starts:
 *
 *   restore-fetch   (operator image) the snapshot to <data volume>/restore/snapshot.db, checked
 *   restore         (etcd image)     etcdutl snapshot restore into <data volume>/restore/data
 *   restore-finish  (operator image) the restored dir renamed to the data dir, unless etcd data is there
 *
 * then check-data and etcd as for any member. Each step can run again after a crash or a Pod
 * restart: fetch starts from an empty working dir, and finish never replaces data etcd wrote.
 */
import type { V1Container, V1Job, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember, EtcdSnapshot, SnapshotSource } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { BUMP_REVISION, peerURL } from '../../machines/policy.ts';
import { tlsOf } from './build-tls.ts';
import { EffectError } from '../types.ts';
import { DATA_DIR, DATA_MOUNT } from './build-etcd-args.ts';
import { containerSecurityContext } from './build-security.ts';
import { agentJob, s3Access, s3Args, storedAt } from './build-snapshot-job.ts';
import { LABEL } from './meta.ts';
import type { PodSettings } from './pod-settings.ts';

/** Where a PVC source is mounted, read-only. */
export const RESTORE_SOURCE_MOUNT = '/restore-source';
/** The working dir of a restore, on the member's data volume (the same filesystem as the data dir). */
export const RESTORE_DIR = `${DATA_MOUNT}/restore`;
export { BUMP_REVISION };
/** Names of the seed's restore init containers, in order. */
export const RESTORE_CONTAINERS = ['restore-fetch', 'restore', 'restore-finish'] as const;

/** Name of the Job that checks a restore's snapshot. */
export const restoreJobName = (cluster: string): string => `${cluster}-restore-verify`;

/** The stored object of a Succeeded EtcdSnapshot, as a source to restore from. */
export function sourceOf(snapshot: EtcdSnapshot): SnapshotSource {
  const name = `EtcdSnapshot ${snapshot.metadata.namespace ?? ''}/${snapshot.metadata.name ?? ''}`;
  if (snapshot.status?.phase !== 'Succeeded' || !snapshot.status.sha256)
    throw new EffectError(
      ERR.RESTORE_SOURCE,
      `${name} is ${snapshot.status?.phase ?? 'Pending'}, not Succeeded: only a snapshot stored and checked can be restored`,
      { retryable: snapshot.status?.phase !== 'Failed' },
    );
  const at = storedAt(snapshot);
  const { s3, pvc } = snapshot.spec.destination;
  const sha256 = snapshot.status.sha256;
  if (s3) {
    const { keyPrefix: _, ...rest } = s3;
    return { s3: { ...rest, key: at.path }, sha256 };
  }
  return { pvc: { claimName: pvc?.claimName ?? '', path: at.path }, sha256 };
}

/** What a Pod needs to read a source: the agent's arguments, the credentials and the claim. */
function access(source: SnapshotSource): {
  args: string[];
  env: V1Container['env'];
  volumes: V1Volume[];
  mounts: V1VolumeMount[];
} {
  const sha = source.sha256 ? [`--sha256=${source.sha256}`] : [];
  if (source.s3) return { args: [...s3Args(source.s3, source.s3.key), ...sha], ...s3Access(source.s3) };
  const pvc = source.pvc!;
  return {
    args: [`--file=${RESTORE_SOURCE_MOUNT}/${pvc.path}`, ...sha],
    env: [],
    volumes: [{ name: 'restore-source', persistentVolumeClaim: { claimName: pvc.claimName, readOnly: true } }],
    mounts: [{ name: 'restore-source', mountPath: RESTORE_SOURCE_MOUNT, readOnly: true }],
  };
}

/** Where a source is, as users read it. */
export const sourceLocation = (source: SnapshotSource): string =>
  source.s3
    ? `s3://${source.s3.bucket}/${source.s3.key}`
    : `pvc://${source.pvc?.claimName ?? ''}/${source.pvc?.path ?? ''}`;

/**
 * The Job that reads the snapshot whole and checks it, and that the cluster's etcd version can
 * run on its data: a bad one, or one of a newer minor, fails the cluster before any member starts.
 */
export function buildRestoreJob(
  cluster: EtcdCluster,
  source: SnapshotSource,
  image: string,
  settings: PodSettings = {},
): V1Job {
  const name = cluster.metadata.name ?? '';
  const { args, env, volumes, mounts } = access(source);
  const labels = {
    [LABEL.name]: 'etcd-restore',
    [LABEL.managedBy]: 'etcd-operator',
    [LABEL.restore]: name,
    [LABEL.job]: 'restore-verify',
  };
  const owner = { kind: 'EtcdCluster', metadata: cluster.metadata };
  const namespace = cluster.metadata.namespace ?? '';
  const job = { name: restoreJobName(name), namespace, labels, owner, env: env ?? [], volumes, mounts };
  // The version the seed will run: a snapshot etcd of it refuses at start fails the check instead.
  const version = [`--etcd-version=${cluster.spec.version}`];
  return agentJob({ ...job, args: ['agent', 'fetch-snapshot', ...args, ...version] }, image, settings);
}

/**
 * The seed's restore init containers, and the volume a PVC source needs; none once etcd ran on
 * the member's volume (dataInitialized), nor for a member without spec.restore.
 */
export function restoreInitContainers(
  member: EtcdMember,
  cluster: EtcdCluster,
  agentImage: string,
  etcdImage: string,
  dataVolume: string,
): { containers: V1Container[]; volumes: V1Volume[] } {
  const source = member.spec.restore;
  if (!source || !member.spec.bootstrap || member.status?.dataInitialized) return { containers: [], volumes: [] };
  const name = member.metadata.name ?? '';
  const ref = { namespace: member.metadata.namespace ?? '', name: member.spec.cluster, peerTLS: tlsOf(cluster).peer };
  const peer = peerURL(ref, name);
  const data: V1VolumeMount = { name: dataVolume, mountPath: DATA_MOUNT };
  const { args, env, volumes, mounts } = access(source);
  const [fetch, restore, finish] = RESTORE_CONTAINERS;
  return {
    volumes,
    containers: [
      {
        name: fetch,
        image: agentImage,
        args: [
          ...['agent', 'fetch-snapshot', ...args, `--to=${RESTORE_DIR}/snapshot.db`, `--clear=${RESTORE_DIR}`],
          `--etcd-version=${member.spec.version}`,
        ],
        env,
        volumeMounts: [data, ...mounts],
        securityContext: containerSecurityContext(),
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
      {
        name: restore,
        image: etcdImage,
        command: ['/usr/local/bin/etcdutl'],
        args: [
          ...['snapshot', 'restore', `${RESTORE_DIR}/snapshot.db`, `--data-dir=${RESTORE_DIR}/data`],
          ...[`--name=${name}`, `--initial-cluster=${member.spec.initialCluster || `${name}=${peer}`}`],
          ...[`--initial-advertise-peer-urls=${peer}`, `--initial-cluster-token=${cluster.metadata.uid ?? ''}`],
          ...[`--bump-revision=${BUMP_REVISION}`, '--mark-compacted'],
        ],
        volumeMounts: [data],
        securityContext: containerSecurityContext(),
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
      {
        name: finish,
        image: agentImage,
        args: [
          'agent',
          'finish-restore',
          `--restored=${RESTORE_DIR}/data`,
          `--data-dir=${DATA_DIR}`,
          `--clean=${RESTORE_DIR}`,
        ],
        volumeMounts: [data],
        securityContext: containerSecurityContext(),
        terminationMessagePolicy: 'FallbackToLogsOnError',
      },
    ],
  };
}
