/** Objects as the manager writes them for a 3-member cluster `demo` at rest, with one backup and one failed. */
import type { EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';

const t = (s: string) => `2026-11-27T10:${s}Z`;
const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: t('00:00'),
});

/** The resume annotation's context: etcd's last word (leader and health by member ID). */
const resume = JSON.stringify({
  sequence: 42,
  state: 'steady',
  intents: [],
  context: {
    etcd: {
      clusterID: 'c1',
      leader: 'b2',
      healthy: ['a1', 'b2'],
      members: [
        { id: 'a1', name: 'demo-0', peerURL: '', learner: false },
        { id: 'b2', name: 'demo-1', peerURL: '', learner: false },
        { id: 'c3', name: 'demo-2', peerURL: '', learner: false },
      ],
    },
  },
});

/** demo: 3 wanted, 2 ready, demo-2 down and stuck. */
export const cluster: EtcdCluster = {
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'demo', namespace: 'prod', annotations: { 'etcd-operator.dev/resume': resume } },
  spec: { replicas: 3, version: '3.6.16', storage: { size: '1Gi' }, progressDeadlineSeconds: 600 },
  status: {
    observed: { step: 'Steady', sequence: 42, stepStartedAt: t('00:00') },
    readyMembers: 2,
    clusterID: 'c1',
    version: '3.6.16',
    members: [
      { name: 'demo-0', memberID: 'a1', role: 'voter', state: 'voter', version: '3.6.16' },
      { name: 'demo-1', memberID: 'b2', role: 'voter', state: 'voter', version: '3.6.16' },
      { name: 'demo-2', memberID: 'c3', role: 'voter', state: 'notReady', version: '3.6.16' },
    ],
    conditions: [
      condition('Available', 'True', 'QuorumHealthy', '2 of 3 voters healthy'),
      condition(
        'Progressing',
        'False',
        'Steady',
        '3 voters, 2 healthy: a quorum; leader demo-1; not answering: demo-2',
      ),
      condition('Degraded', 'True', 'MemberDown', 'demo-2 does not answer since 2026-11-27T10:00:00Z'),
    ],
  },
};

/** Its members; demo-2's Pod cannot pull its image. */
export const members: EtcdMember[] = ['demo-0', 'demo-1', 'demo-2'].map((name) => ({
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdMember',
  metadata: { name, namespace: 'prod' },
  spec: { cluster: 'demo', version: '3.6.16', storage: { size: '1Gi' }, bootstrap: name === 'demo-0', dormant: false },
  status: {
    state: name === 'demo-2' ? 'notReady' : 'voter',
    conditions:
      name === 'demo-2'
        ? [condition('Stuck', 'True', 'ImagePullBackOff', 'Back-off pulling image "etcd:v3.6.16"')]
        : [],
  },
}));

const snapshot = (name: string, status: EtcdSnapshot['status'], cluster = 'demo'): EtcdSnapshot => ({
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdSnapshot',
  metadata: { name, namespace: 'prod' },
  spec: {
    clusterRef: { name: cluster },
    destination: { pvc: { claimName: 'backups' } },
    deletionPolicy: 'Delete',
    verify: false,
  },
  ...(status ? { status } : {}),
});

/** Two good snapshots (the newer one wins), one failed, one of another cluster. */
export const snapshots: EtcdSnapshot[] = [
  snapshot('demo-old', {
    phase: 'Succeeded',
    completionTime: t('01:00'),
    size: 1024,
    location: 'pvc://backups/old.db',
  }),
  snapshot('demo-new', {
    phase: 'Succeeded',
    completionTime: t('05:00'),
    size: 3 * 1024 * 1024,
    location: 'pvc://backups/new.db',
    etcdVersion: '3.6.16',
  }),
  snapshot('demo-bad', {
    phase: 'Failed',
    completionTime: t('06:00'),
    conditions: [condition('Complete', 'False', 'Failed', 'the bucket backups does not exist')],
  }),
  snapshot('other-new', { phase: 'Succeeded', completionTime: t('09:00'), size: 1 }, 'other'),
];

/** A nightly schedule of demo. */
export const schedules: EtcdSnapshotSchedule[] = [
  {
    apiVersion: 'etcd-operator.dev/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: { name: 'nightly', namespace: 'prod' },
    spec: {
      clusterRef: { name: 'demo' },
      schedule: '0 3 * * *',
      destination: { s3: { bucket: 'b', forcePathStyle: true, credentialsSecretRef: { name: 'k' } } as never },
      retention: { keepLast: 7 },
      suspend: false,
      concurrencyPolicy: 'Forbid',
      failedHistoryLimit: 1,
      deletionPolicy: 'Delete',
    },
    status: { nextScheduleTime: '2026-11-28T03:00:00Z', lastSuccessfulTime: t('05:00') },
  },
];
