/**
 * The Job that proves a stored snapshot by restoring it (spec.verify). One Pod, in order:
 *
 *   fetch    (operator image)  the stored snapshot to an emptyDir, checked against its recorded sha256
 *   restore  (etcd image)      etcdutl snapshot restore, which checks etcd's own hash at its end
 *   etcd     (etcd image)      a native sidecar: a cluster of one on the restored data, on loopback only
 *   agent    (operator image)  verify-snapshot: HashKV, the revision and the key count against the record
 *
 * The throwaway etcd listens on 127.0.0.1 in the Pod's own network namespace and no Service selects
 * the Pod: it serves no client, and joins nothing (its own initial cluster, a new cluster ID). It
 * goes with the Pod, its data with the emptyDir. Ports are fixed: nothing else shares the Pod.
 */
import type { V1Container, V1Job } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { containerSecurityContext } from './build-security.ts';
import { snapshotAgentJob, storedAt } from './build-snapshot-job.ts';
import { etcdImage, type PodSettings } from './pod-settings.ts';

/** Name of the Job that verifies the snapshot. */
export const verifyJobName = (snapshot: string): string => `${snapshot}-verify`;
/** The init containers of the verify Job's Pod, in order (the last is the etcd sidecar). */
export const VERIFY_CONTAINERS = ['fetch', 'restore', 'etcd'] as const;

const WORK = '/verify';
const CLIENT = 'http://127.0.0.1:2379';
const PEER = 'http://127.0.0.1:2380';
const cluster = ['--name=verify', `--initial-cluster=verify=${PEER}`, `--initial-advertise-peer-urls=${PEER}`];

/** What a verify Job needs of a snapshot: stored and checked, with what was recorded as it was taken. */
export function verifyRefusal(s: EtcdSnapshot): string | null {
  const st = s.status;
  if (!st?.sha256 || st.revision === undefined || !st.etcdVersion) return 'it is not stored and checked yet';
  if (st.hashKV === undefined || st.keys === undefined || st.compactRevision === undefined)
    return 'nothing was recorded to check it against (it was taken by an agent that recorded no HashKV and key count)';
  return null;
}

/** The verify Job of a snapshot whose verifyRefusal is null. */
export function buildVerifyJob(s: EtcdSnapshot, image: string, settings: PodSettings = {}): V1Job {
  const st = s.status!;
  const work = { name: 'verify', mountPath: WORK };
  const record = [`--revision=${st.revision}`, `--hash-kv=${st.hashKV}`, `--compact-revision=${st.compactRevision}`];
  const args = ['agent', 'verify-snapshot', `--endpoint=${CLIENT}`, ...record, `--keys=${st.keys}`];
  const job = snapshotAgentJob(s, verifyJobName(s.metadata.name ?? ''), 'verify', args, image, undefined, settings);
  const pod = job.spec!.template.spec!;
  const agent = pod.containers[0]!;
  const [fetch, restore, etcd] = VERIFY_CONTAINERS;
  const etcdAt = etcdImage(st.etcdVersion!, settings.etcdImageRepository);
  const base = { securityContext: containerSecurityContext(), terminationMessagePolicy: 'FallbackToLogsOnError' };
  const init: V1Container[] = [
    {
      name: fetch,
      image,
      args: ['agent', 'fetch-snapshot', ...storedAt(s).args, `--sha256=${st.sha256}`, `--to=${WORK}/snapshot.db`],
      env: agent.env ?? [],
      volumeMounts: [...(agent.volumeMounts ?? []), work],
      ...base,
    },
    {
      name: restore,
      image: etcdAt,
      command: ['/usr/local/bin/etcdutl'],
      args: ['snapshot', 'restore', `${WORK}/snapshot.db`, `--data-dir=${WORK}/data`, ...cluster],
      volumeMounts: [work],
      ...base,
    },
    {
      name: etcd,
      image: etcdAt,
      // A native sidecar: started before the agent, stopped when the agent ends.
      restartPolicy: 'Always',
      command: ['/usr/local/bin/etcd'],
      args: [
        `--data-dir=${WORK}/data`,
        ...cluster,
        ...[`--listen-client-urls=${CLIENT}`, `--advertise-client-urls=${CLIENT}`, `--listen-peer-urls=${PEER}`],
      ],
      volumeMounts: [work],
      ...base,
    },
  ];
  pod.initContainers = init;
  // The agent reads nothing from the store: only the restored etcd beside it.
  agent.env = [];
  agent.volumeMounts = [];
  pod.volumes = [...(pod.volumes ?? []), { name: 'verify', emptyDir: {} }];
  return job;
}
