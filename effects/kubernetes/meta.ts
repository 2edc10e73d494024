/**
 * Names, labels, the finalizer and owner references every object the operator owns carries,
 * so a selector, a garbage collector and a person all find a member's parts the same way.
 */
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import type { AdditionalMetadata, EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import { apiVersion } from '../../api/v1alpha1/index.ts';
import { HOLD_FINALIZER_PREFIX } from '../../machines/intents.ts';

/** API group of the operator's kinds. */
export const GROUP = 'etcd-operator.dev';
/** API version of the operator's kinds (without the group). */
export const VERSION = 'v1alpha1';
/** Plural resource names, as the API server serves them. */
export const PLURAL = {
  cluster: 'etcdclusters',
  member: 'etcdmembers',
  snapshot: 'etcdsnapshots',
  schedule: 'etcdsnapshotschedules',
} as const;

/** Finalizer on every EtcdMember: the member leaves etcd before its object goes. */
export const FINALIZER = 'etcd-operator.dev/leave-etcd';
/** Finalizer on every EtcdSnapshot: what its Job stored is deleted (unless Retain) before the object goes. */
export const SNAPSHOT_FINALIZER = 'etcd-operator.dev/delete-stored-snapshot';
/** The finalizer of an EtcdCluster's hold on the EtcdSnapshot it restores from (machines/intents.ts). */
export { holdFinalizer } from '../../machines/intents.ts';
/** The clusters whose hold is on an object with these finalizers. */
export const holdersOf = (finalizers: readonly string[] | undefined): string[] =>
  (finalizers ?? [])
    .filter((f) => f.startsWith(HOLD_FINALIZER_PREFIX))
    .map((f) => f.slice(HOLD_FINALIZER_PREFIX.length));

/** Label keys. */
export const LABEL = {
  name: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  cluster: 'etcd-operator.dev/cluster',
  member: 'etcd-operator.dev/member',
  /** On an EtcdSnapshot's Jobs and their Pods: the EtcdSnapshot's name. */
  snapshot: 'etcd-operator.dev/snapshot',
  /** On every Job of the operator and its Pods: snapshot, delete or restore-verify. */
  job: 'etcd-operator.dev/job',
  /** On the Job that checks a restore's snapshot, and its Pods: the EtcdCluster's name. */
  restore: 'etcd-operator.dev/restore',
  /** On an EtcdSnapshot an EtcdSnapshotSchedule made: the schedule's name. */
  schedule: 'etcd-operator.dev/schedule',
  /** On an EtcdSnapshot an EtcdSnapshotSchedule made: the schedule's uid; only these are its to prune. */
  scheduleUid: 'etcd-operator.dev/schedule-uid',
  /** On the EtcdSnapshot a rolling upgrade takes first: the version the roll goes to. */
  upgradeTo: 'etcd-operator.dev/upgrade-to',
} as const;

/**
 * Annotation on a member Pod: the CA digest (EtcdMember spec.trust) it was made with. etcd reads
 * its CA files once, at start, so a Pod whose digest differs from its member's is made again.
 */
export const TRUST_ANNOTATION = 'etcd-operator.dev/trust';

/**
 * Annotation on a member Pod started with --force-new-cluster: the recovery requestID
 * (EtcdMember spec.forceNewCluster) it was made for. A Pod without it started plainly.
 */
export const FORCE_NEW_CLUSTER_ANNOTATION = 'etcd-operator.dev/force-new-cluster';

/**
 * Annotation on an EtcdMember made with a data guard: its Pods' check-data writes the member's uid
 * into its data dir at the first start and refuses data without it after (manager/agent.ts).
 * Members made before it have none, and are checked as before.
 */
export const DATA_GUARD_ANNOTATION = 'etcd-operator.dev/data-guard';

/** Annotation on an EtcdSnapshot a schedule made: the fire time it was made for (RFC 3339). */
export const SCHEDULED_AT = 'etcd-operator.dev/scheduled-at';

/** Labels of everything that belongs to a cluster; the Services select member Pods by these. */
export const clusterLabels = (cluster: string): Record<string, string> => ({
  [LABEL.name]: 'etcd',
  [LABEL.managedBy]: 'etcd-operator',
  [LABEL.cluster]: cluster,
});

/** Labels of one member's objects (EtcdMember, Pod, PVC). */
export const memberLabels = (cluster: string, member: string): Record<string, string> => ({
  ...clusterLabels(cluster),
  [LABEL.member]: member,
});

/** Name of a member's PersistentVolumeClaim. */
export const pvcName = (member: string): string => `data-${member}`;

/** Name of a cluster's client Service (the headless one carries the cluster's own name). */
export const clientServiceName = (cluster: string): string => `${cluster}-client`;

/** The controlling owner reference to an object, so the garbage collector takes ours with it. */
export function controllerRef(owner: { apiVersion: string; kind: string; metadata: V1ObjectMeta }): V1OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Metadata of an object the operator owns: user's additional metadata first, ours over it. */
export function ownedMeta(
  name: string,
  namespace: string,
  labels: Record<string, string>,
  owner: EtcdCluster | EtcdMember,
  extra: AdditionalMetadata | undefined,
): V1ObjectMeta {
  const annotations = extra?.annotations;
  return {
    name,
    namespace,
    labels: { ...extra?.labels, ...labels },
    ...(annotations && Object.keys(annotations).length > 0 ? { annotations: { ...annotations } } : {}),
    ownerReferences: [controllerRef({ apiVersion, kind: owner.kind, metadata: owner.metadata })],
  };
}

/** The uid of an object's controlling owner, if it has one. */
export const controllerUid = (meta: V1ObjectMeta | undefined): string | undefined =>
  meta?.ownerReferences?.find((r) => r.controller)?.uid;
