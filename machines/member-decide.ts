/**
 * The member machine's context, its guards, and its one decision: given what is observed,
 * which step comes next. `deciding` and every resting state ask the same function.
 */
import { NO_STEP, type StepBookkeeping } from './kit.ts';
import type { ClusterObjectRef, EtcdMemberInfo, ObjectRef, PodObservation, Trouble } from './types.ts';

/** Everything the member machine knows. Plain JSON: journaled with every step. */
export interface MemberContext extends StepBookkeeping {
  readonly member: ObjectRef & { readonly cluster: string } & Pick<ClusterObjectRef, 'peerTLS'>;
  readonly bootstrap: boolean;
  readonly medium: '' | 'Memory';
  readonly dormant: boolean;
  readonly deleting: boolean;
  readonly clusterDeleting: boolean;
  /** Absent until observed; null when there is none. */
  readonly pod?: PodObservation | null;
  readonly pvcBound?: boolean | null;
  /** Why the claim is not bound yet; null or absent: nothing to say. */
  readonly pvcTrouble?: Trouble | null;
  /** The node the claim is tied to (its volume's, or the one selected for it), once gone; null or absent: none is. */
  readonly pvcLostNode?: string | null;
  /** Since when (event time) memberTrouble has given this reason; null or absent: no trouble. */
  readonly troubleSince?: { readonly reason: string; readonly at: number } | null;
  readonly etcd?: EtcdMemberInfo | null;
  /** The Pod this machine created or adopted, and whether it has been seen since. */
  readonly podUID: string | null;
  readonly podSeen: boolean;
  /** etcd ran here once: a data directory exists (or existed) for this member. */
  readonly everRan: boolean;
  /**
   * etcd listed the member as started (its client URLs published), whether or not a Pod of it
   * was seen Ready: its volume held etcd's data. Only what the Pod's data check expects reads it;
   * the steps go by `everRan`, so a first start still shows as bootstrapping until Ready.
   */
  readonly etcdStarted?: boolean;
  /** A bootstrap member whose initial cluster names it alone (k8s.member.updated); absent in older journals. */
  readonly alone?: boolean;
  readonly dataLost: string | null;
  /**
   * The etcd container's restart count when this Pod was first seen: a restart after it ran
   * the container again without the check-data init container, so the data is checked anew.
   */
  readonly podRestarts?: { readonly uid: string; readonly count: number } | null;
  /** Data checks forced in a row without the Pod getting ready: they back off like retries. */
  readonly rechecks?: number;
  /** `${member generation}/${cluster generation}`: the specs the member's Pod and volume are built from. */
  readonly generations?: string;
  /** EtcdMember.spec.version: the etcd version its Pod is to run. */
  readonly version?: string;
  /** EtcdMember.spec.trust: the CA digest its Pod is to start with; absent without TLS. */
  readonly trust?: string;
  /** EtcdMember.spec.forceNewCluster: a recovery's requestID while its Pod is to start with --force-new-cluster. */
  readonly forceNewCluster?: string | null;
  /** The etcd version of the last Pod seen ready: differs from `version` until an upgrade is done. */
  readonly ranVersion?: string;
  /** Set by a failure retrying cannot fix: what it failed with (see failureKey). */
  readonly failedWith?: string | null;
}

/** What a member machine starts from. */
export interface MemberInput {
  readonly member: ObjectRef & { readonly cluster: string } & Pick<ClusterObjectRef, 'peerTLS'>;
  readonly bootstrap: boolean;
  readonly medium: '' | 'Memory';
}

/** The context of a member not observed yet. */
export const initialMemberContext = (i: MemberInput): MemberContext => ({
  ...i,
  dormant: false,
  deleting: false,
  clusterDeleting: false,
  podUID: null,
  podSeen: false,
  everRan: false,
  dataLost: null,
  ...NO_STEP,
});

type Ctx = { context: MemberContext };

/** What a permanent failure is tied to: the step, the specs its effects are built from, and whether the cluster is going. */
export const failureKey = (c: MemberContext): string =>
  `${decideMember(c)} ${c.generations ?? ''} ${c.clusterDeleting}`;

const podMissing = (c: MemberContext): boolean => c.pod === null && (c.podUID === null || c.podSeen);

/** Guards by name. */
export const guards = {
  observed: ({ context: c }: Ctx) => c.pod !== undefined && (c.medium === 'Memory' || c.pvcBound !== undefined),
  podMissing: ({ context: c }: Ctx) => podMissing(c),
  podPresent: ({ context: c }: Ctx) => Boolean(c.pod),
  podReady: ({ context: c }: Ctx) => Boolean(c.pod?.ready && !c.pod.deleting),
  volumePresent: ({ context: c }: Ctx) => c.pvcBound !== null && c.pvcBound !== undefined,
  deleting: ({ context: c }: Ctx) => c.deleting,
  clusterDeleting: ({ context: c }: Ctx) => c.clusterDeleting,
  // A member of a cluster of its own that never started etcd is in no etcd cluster: there is none
  // to leave (a recovery's seed that could not restore, while the old members are stopped).
  inNoCluster: ({ context: c }: Ctx) => c.alone === true && !c.everRan && c.etcdStarted !== true && !c.etcd,
  dataLost: ({ context: c }: Ctx) => c.dataLost !== null,
  memoryLost: ({ context: c }: Ctx) => c.medium === 'Memory' && c.everRan && podMissing(c),
  volumeLost: ({ context: c }: Ctx) => c.medium !== 'Memory' && c.everRan && c.pvcBound === null,
  dormant: ({ context: c }: Ctx) => c.dormant,
  awake: ({ context: c }: Ctx) => !c.dormant,
  needsVolume: ({ context: c }: Ctx) => c.medium !== 'Memory' && c.pvcBound === null,
  firstSeed: ({ context: c }: Ctx) => c.bootstrap && !c.everRan,
  firstJoin: ({ context: c }: Ctx) => !c.bootstrap && !c.everRan,
  notRunning: ({ context: c }: Ctx) => !c.pod?.ready || c.pod.deleting,
  learner: ({ context: c }: Ctx) => c.etcd?.learner === true,
  // etcd's container restarted in this Pod after etcd ran: its data was never checked since.
  // Not for a Memory member: its data lives in the Pod, which a recheck would throw away.
  restartedInPlace: ({ context: c }: Ctx) =>
    c.everRan &&
    c.medium !== 'Memory' &&
    Boolean(
      c.pod && !c.pod.deleting && c.podRestarts?.uid === c.pod.uid && (c.pod.restarts ?? 0) > c.podRestarts.count,
    ),
  failureOutdated: ({ context: c }: Ctx) => c.failedWith !== failureKey(c),
  // Its node is down past the Pod's toleration: Kubernetes evicts the Pod, which no kubelet will
  // confirm gone. The cluster replaces the member (while a quorum remains); nothing is latched, so
  // a node back before that lets the Pod go and the member restart there from its volume.
  podEvicted: ({ context: c }: Ctx) => Boolean(c.pod?.evictedFromNode),
  // Or its node was deleted: the volume is pinned there, or (the claim Pending) to be made there,
  // so no Pod can be scheduled elsewhere, whether etcd ever ran on it or not.
  nodeLost: ({ context: c }: Ctx) => Boolean(c.pod?.evictedFromNode) || Boolean(c.pvcLostNode && !c.pod?.ready),
  // The member ran another version than its spec asks: a rolling upgrade (or its undoing) restarts it.
  versionOutdated: ({ context: c }: Ctx) =>
    c.version !== undefined && c.ranVersion !== undefined && c.ranVersion !== c.version,
  // Its Pod runs another version than the spec, or started trusting other CAs (etcd reads its CA
  // files once, at start), or with --force-new-cluster other than a recovery asks: made again.
  podOutdated: ({ context: c }: Ctx) =>
    Boolean(
      c.pod &&
      !c.pod.deleting &&
      ((c.pod.version !== undefined && c.pod.version !== c.version) ||
        (c.trust !== undefined && c.pod.trust !== c.trust) ||
        (c.pod.forceNewCluster ?? null) !== (c.forceNewCluster ?? null)),
    ),
};

/** The steps `decideMember` can choose. */
export const MEMBER_DECISIONS = [
  'removing',
  'replacing',
  'nodeLost',
  'parking',
  'creatingVolume',
  'bootstrapping',
  'joiningLearner',
  'upgrading',
  'rechecking',
  'restarting',
  'catchingUp',
  'voter',
] as const;
/** One of MEMBER_DECISIONS. */
export type MemberDecision = (typeof MEMBER_DECISIONS)[number];

/** Which step comes next for this member. */
export function decideMember(c: MemberContext): MemberDecision {
  const g = { context: c };
  if (c.deleting) return 'removing';
  if (guards.dataLost(g) || guards.memoryLost(g) || guards.volumeLost(g)) return 'replacing';
  if (guards.nodeLost(g)) return 'nodeLost';
  if (c.dormant) return 'parking';
  if (guards.needsVolume(g)) return 'creatingVolume';
  if (!c.everRan) return c.bootstrap ? 'bootstrapping' : 'joiningLearner';
  if (guards.versionOutdated(g) || guards.podOutdated(g)) return 'upgrading';
  if (guards.restartedInPlace(g)) return 'rechecking';
  if (guards.notRunning(g)) return 'restarting';
  return guards.learner(g) ? 'catchingUp' : 'voter';
}

/** What keeps the member's Pod or claim from running now, if anything: the claim first, then the Pod. */
export const memberTrouble = (c: MemberContext): Trouble | undefined =>
  c.pvcTrouble ?? (c.pod && !c.pod.deleting ? c.pod.trouble : undefined);

/** The next `troubleSince` once `c` is what is observed at `at`: kept while the reason holds. */
export function troubleSince(c: MemberContext, at: number): MemberContext['troubleSince'] {
  const t = memberTrouble(c);
  if (!t) return null;
  return c.troubleSince?.reason === t.reason ? c.troubleSince : { reason: t.reason, at };
}
