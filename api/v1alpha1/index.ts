/** The kinds of etcd-operator.dev/v1alpha1, and their generated types. */
import type { Kind } from '../schema.ts';
import { etcdCluster } from './etcdcluster.ts';
import { etcdMember } from './etcdmember.ts';
import { etcdSnapshot } from './etcdsnapshot.ts';
import { etcdSnapshotSchedule } from './etcdsnapshotschedule.ts';

/** Every kind the operator defines, in the order the docs list them. */
export const kinds: readonly Kind[] = [etcdCluster, etcdMember, etcdSnapshot, etcdSnapshotSchedule];

export * from './types.generated.ts';
export { DEFAULT_ETCD_VERSION } from './common.ts';
export { MAX_CLUSTER_NAME } from './etcdcluster.ts';
export { MAX_SNAPSHOT_NAME } from './etcdsnapshot.ts';
export { MAX_SCHEDULE_NAME } from './etcdsnapshotschedule.ts';
export { ROOT_USER, TLS_SECRET_KEYS } from './tls.ts';
