/**
 * Turns what the watches see into the machines' events. Level-based: every event carries
 * the whole observation (the spec, every member, the Pod as it is now), so a missed or
 * repeated watch event changes nothing. Pure: the caller stamps the time.
 */
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember, EtcdSnapshot } from '../api/v1alpha1/index.ts';
import type {
  ClaimObservation,
  ClusterEvent,
  MaintenanceSpec,
  MemberEvent,
  MemberObservation,
  PreUpgradeSnapshot,
  RecoveryRequest,
  Trouble,
  VolumeSize,
} from '../machines/types.ts';
import { MEMBER_STATE } from '../machines/member-state.ts';
import { quantityBytes } from '../effects/kubernetes/build-etcd-args.ts';
import { FORCE_NEW_CLUSTER_ANNOTATION, LABEL, TRUST_ANNOTATION } from '../effects/kubernetes/meta.ts';
import { ConditionType } from '../api/conditions.ts';
import { ETCD_CONTAINER } from '../effects/kubernetes/build-pod.ts';
import { claimTrouble, podTrouble } from './pod-trouble.ts';

/**
 * The cluster machine's view of its EtcdCluster, and of the CA digest of its Secrets (read by the
 * manager, manager/cluster-trust.ts; undefined without TLS or while not known).
 */
export function clusterObserved(cluster: EtcdCluster, at: number, trust?: string): ClusterEvent {
  if (cluster.metadata.deletionTimestamp) return { type: 'k8s.cluster.deleted', at };
  const { replicas, version, progressDeadlineSeconds } = cluster.spec;
  return {
    type: 'k8s.cluster.updated',
    at,
    spec: { replicas, version, ...(trust !== undefined ? { trust } : {}) },
    progressDeadlineSeconds,
    ...(cluster.spec.bootstrap?.restore ? { restore: true } : {}),
    ...(cluster.spec.bootstrap?.restore?.snapshotName
      ? { restoreSnapshot: cluster.spec.bootstrap.restore.snapshotName }
      : {}),
    ...(cluster.spec.upgrade?.snapshot ? { upgradeSnapshot: true } : {}),
    ...(cluster.spec.options?.snapshotCount !== undefined ? { snapshotCount: cluster.spec.options.snapshotCount } : {}),
    ...(cluster.spec.tls?.client?.issuerRef || cluster.spec.tls?.peer?.issuerRef ? { certificates: true } : {}),
    ...(cluster.spec.auth?.enabled ? { auth: true } : {}),
    ...recoveryObserved(cluster.spec),
    ...(cluster.status?.recovery ? { recoveryHandled: cluster.status.recovery.requestID } : {}),
    maintenance: maintenanceObserved(cluster.spec),
    volumeSize: volumeSizeObserved(cluster.spec),
  };
}

/** spec.recovery as the cluster machine reads it (the API server defaults `from`). */
function recoveryObserved(spec: EtcdCluster['spec']): { recovery?: RecoveryRequest } {
  const r = spec.recovery;
  if (!r) return {};
  return {
    recovery: {
      requestID: r.requestID,
      from: r.from === 'snapshot' ? 'snapshot' : 'survivor',
      ...(r.member !== undefined ? { member: r.member } : {}),
      ...(r.snapshotName !== undefined ? { snapshotName: r.snapshotName } : {}),
      ...(r.allowOtherCluster === true ? { allowOtherCluster: true } : {}),
      ...(r.rollback === true ? { rollback: true } : {}),
    },
  };
}

/** spec.storage.size as written and in bytes; null for storage.medium Memory (no claims to grow). */
export function volumeSizeObserved(spec: EtcdCluster['spec']): VolumeSize | null {
  // The API server defaults it; an object built by hand (a test) may lack it.
  const storage = spec.storage as EtcdCluster['spec']['storage'] | undefined;
  if (!storage || storage.medium === 'Memory') return null;
  const b = bytes(storage.size);
  return b === null ? null : { quantity: String(storage.size), bytes: b };
}

/** Resize conditions that say the resize failed, as a claim reports them. */
const RESIZE_ERRORS = ['ControllerResizeError', 'NodeResizeError'];

/** The cluster machine's view of its members' claims (labelled with the cluster and a member), by member. */
export function claimsListed(cluster: string, pvcs: readonly V1PersistentVolumeClaim[], at: number): ClusterEvent {
  const claims: ClaimObservation[] = pvcs
    .filter((p) => p.metadata?.labels?.[LABEL.cluster] === cluster && p.metadata.labels[LABEL.member])
    .filter((p) => !p.metadata?.deletionTimestamp)
    .map((p) => {
      const bound = p.status?.phase === 'Bound';
      const conditions = p.status?.conditions ?? [];
      const error = conditions.find((c) => RESIZE_ERRORS.includes(c.type) && c.status === 'True');
      const infeasible = Object.values(p.status?.allocatedResourceStatuses ?? {}).find((s) => s.endsWith('Infeasible'));
      const failure = error ? `${error.type}: ${error.message ?? ''}` : infeasible;
      const pending = conditions.some((c) => c.type === 'FileSystemResizePending' && c.status === 'True');
      return {
        member: p.metadata?.labels?.[LABEL.member] ?? '',
        storageClass: p.spec?.storageClassName ?? '',
        requested: bytes(p.spec?.resources?.requests?.['storage']) ?? 0,
        capacity: bound ? bytes(p.status?.capacity?.['storage']) : null,
        ...(pending ? { pending } : {}),
        ...(failure ? { failure } : {}),
      };
    })
    .sort((a, b) => a.member.localeCompare(b.member, 'en', { numeric: true }));
  return { type: 'k8s.claims.listed', at, claims };
}

/** A quantity in bytes; null when absent (or not one the API server should have let through). */
function bytes(q: string | number | undefined): number | null {
  if (q === undefined) return null;
  try {
    return quantityBytes(q);
  } catch {
    return null;
  }
}

/** spec.maintenance and the backend quota as the cluster machine reads them: bytes as numbers. */
export function maintenanceObserved(spec: EtcdCluster['spec']): MaintenanceSpec {
  const d = spec.maintenance?.defrag;
  return {
    defrag: d
      ? {
          schedule: d.schedule ?? null,
          timeZone: d.timeZone ?? null,
          fragmentedBytes: bytes(d.threshold?.fragmentedBytes),
          fragmentedPercent: d.threshold?.fragmentedPercent ?? null,
        }
      : null,
    quotaBytes: bytes(spec.options?.quotaBackendBytes),
  };
}

/** The EtcdSnapshots this cluster's rolls took first (labelled with the version rolled to), by name. */
export function upgradeSnapshotsListed(cluster: string, snapshots: readonly EtcdSnapshot[], at: number): ClusterEvent {
  const listed: PreUpgradeSnapshot[] = snapshots
    .filter((s) => s.metadata.labels?.[LABEL.cluster] === cluster && s.metadata.labels[LABEL.upgradeTo])
    .map((s) => {
      const phase = s.status?.phase ?? '';
      const why = s.status?.conditions?.find((c) => c.type === ConditionType.Progressing)?.message;
      return {
        name: s.metadata.name ?? '',
        version: s.metadata.labels?.[LABEL.upgradeTo] ?? '',
        phase,
        ...(phase === 'Failed' && why ? { message: why } : {}),
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  return { type: 'k8s.upgradeSnapshots.listed', at, snapshots: listed };
}

/** The ordinal at the end of a member's name (`demo-12` -> 12); -1 when there is none. */
export function ordinalOf(cluster: string, member: string): number {
  const suffix = member.startsWith(`${cluster}-`) ? member.slice(cluster.length + 1) : '';
  return /^\d+$/.test(suffix) ? Number(suffix) : -1;
}

/** The cluster machine's view of every EtcdMember of its cluster. */
export function membersListed(
  cluster: string,
  members: readonly EtcdMember[],
  at: number,
  podOf: (member: string) => V1Pod | undefined = () => undefined,
): ClusterEvent {
  const observed: MemberObservation[] = members
    .filter((m) => m.spec.cluster === cluster)
    .map((m) => {
      const pod = podOf(m.metadata.name ?? '');
      const podTrust = pod?.metadata?.annotations?.[TRUST_ANNOTATION];
      return {
        name: m.metadata.name ?? '',
        ordinal: ordinalOf(cluster, m.metadata.name ?? ''),
        bootstrap: m.spec.bootstrap,
        dormant: m.spec.dormant,
        state: m.status?.state ?? MEMBER_STATE.pending,
        deleting: Boolean(m.metadata.deletionTimestamp),
        version: m.spec.version,
        ...(m.spec.trust !== undefined ? { trust: m.spec.trust } : {}),
        ...(podTrust !== undefined ? { podTrust } : {}),
        ...(m.spec.forceNewCluster !== undefined ? { forceNewCluster: m.spec.forceNewCluster } : {}),
        ...(pod ? { pod: { forceNewCluster: pod.metadata?.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION] ?? '' } } : {}),
        ...(m.status?.state === MEMBER_STATE.failed ? { failure: failureOf(m) } : {}),
        ...stuckOf(m),
      };
    })
    .sort((a, b) => a.ordinal - b.ordinal || a.name.localeCompare(b.name));
  return { type: 'k8s.members.listed', at, members: observed };
}

/** What keeps a member's Pod from running, as its Stuck condition says, and since when. */
function stuckOf(m: EtcdMember): { trouble?: MemberObservation['trouble'] } {
  const stuck = m.status?.conditions?.find((c) => c.type === ConditionType.Stuck && c.status === 'True');
  if (!stuck) return {};
  return {
    trouble: { reason: stuck.reason, message: stuck.message, since: Date.parse(stuck.lastTransitionTime) || 0 },
  };
}

/** Why a failed member stopped, as its Progressing condition says. */
const failureOf = (m: EtcdMember): string =>
  m.status?.conditions?.find((c) => c.type === ConditionType.Progressing)?.message ?? 'see kubectl describe etcdmember';

/** The member machine's view of its EtcdMember (and whether its cluster is going). */
export function memberObserved(member: EtcdMember, cluster: EtcdCluster | undefined, at: number): MemberEvent {
  return {
    type: 'k8s.member.updated',
    at,
    dormant: member.spec.dormant,
    deleting: Boolean(member.metadata.deletionTimestamp),
    clusterDeleting: !cluster || Boolean(cluster.metadata.deletionTimestamp),
    generation: member.metadata.generation ?? 0,
    clusterGeneration: cluster?.metadata.generation ?? 0,
    version: member.spec.version,
    ...(member.spec.trust !== undefined ? { trust: member.spec.trust } : {}),
    ...(member.spec.forceNewCluster !== undefined ? { forceNewCluster: member.spec.forceNewCluster } : {}),
    ...(member.spec.bootstrap ? { alone: initialAlone(member) } : {}),
  };
}

/** Its initial cluster names it alone (or is empty: built as itself alone, build-restore.ts). */
function initialAlone(member: EtcdMember): boolean {
  const names = (member.spec.initialCluster ?? '')
    .split(',')
    .filter(Boolean)
    .map((p) => p.split('=')[0]);
  return names.every((n) => n === member.metadata.name);
}

/** The member machine's view of its Pod; `undefined` when it has none. */
export function podObserved(pod: V1Pod | undefined, at: number): MemberEvent {
  if (!pod) return { type: 'k8s.pod.observed', at, pod: null };
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const restarts = pod.status?.containerStatuses?.find((c) => c.name === ETCD_CONTAINER)?.restartCount ?? 0;
  const version = versionOfImage(pod.spec?.containers.find((c) => c.name === ETCD_CONTAINER)?.image);
  const evictedFromNode = evictedFromLostNode(pod);
  const trust = pod.metadata?.annotations?.[TRUST_ANNOTATION];
  const forceNewCluster = pod.metadata?.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION];
  const trouble = podTrouble(pod);
  return {
    type: 'k8s.pod.observed',
    at,
    pod: {
      uid: pod.metadata?.uid ?? '',
      phase: pod.status?.phase ?? 'Pending',
      ready,
      deleting: Boolean(pod.metadata?.deletionTimestamp),
      restarts,
      ...(version ? { version } : {}),
      ...(trust !== undefined ? { trust } : {}),
      ...(forceNewCluster !== undefined ? { forceNewCluster } : {}),
      ...(evictedFromNode ? { evictedFromNode } : {}),
      ...(trouble ? { trouble } : {}),
    },
  };
}

/**
 * The node a Pod is being evicted from because the node is down: kube-controller-manager's taint
 * eviction marks it DisruptionTarget (DeletionByTaintManager) and deletes it once the node's
 * NotReady or unreachable taint outlasts the Pod's toleration.
 */
function evictedFromLostNode(pod: V1Pod): string | undefined {
  const evicted = pod.status?.conditions?.some(
    (c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'DeletionByTaintManager',
  );
  return evicted && pod.metadata?.deletionTimestamp ? pod.spec?.nodeName : undefined;
}

/** The etcd version an image's tag names (`quay.io/coreos/etcd:v3.6.16` -> 3.6.16), if any. */
export function versionOfImage(image: string | undefined): string | undefined {
  return /:v(\d+\.\d+\.\d+)$/.exec(image ?? '')?.[1];
}

/**
 * The member machine's view of its volume claim: null when there is none, else whether it is
 * bound; `lostNode` when it is tied to a node that is gone (its volume's, or while Pending the
 * one selected for it: manager/volume-nodes.ts),
 * `warning` the newest Warning Event on it while Pending (manager/claim-warnings.ts).
 */
export function pvcObserved(
  pvc: V1PersistentVolumeClaim | undefined,
  at: number,
  seen: { readonly lostNode?: string | undefined; readonly warning?: Trouble | undefined } = {},
): MemberEvent {
  // A claim being deleted holds no data the member may count on.
  if (!pvc || pvc.metadata?.deletionTimestamp) return { type: 'k8s.pvc.observed', at, bound: null };
  const trouble = claimTrouble(pvc, seen.warning);
  return {
    type: 'k8s.pvc.observed',
    at,
    bound: pvc.status?.phase === 'Bound',
    ...(trouble ? { trouble } : {}),
    ...(seen.lostNode ? { lostNode: seen.lostNode } : {}),
  };
}
