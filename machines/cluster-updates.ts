/**
 * What the cluster machine's steps write into its context, and the parameters of its
 * intents, as small pure functions of (context, event).
 */
import { lostMember, orphanMembers, unwellSince, victim, wantedBudget, type ClusterContext } from './cluster-decide.ts';
import { CONCERN_UPDATES } from './cluster/concerns.ts';
import { ERR } from './error-codes.ts';
import { DEFAULT_SNAPSHOT_COUNT, latchDuringRoll } from './cluster/roll/index.ts';
import { observeMaintenance, overThreshold } from './cluster/maintenance/index.ts';
import { failureOf, stepUpdates, toAssigns, type Update } from './kit.ts';
import { memberName, peerURL, seedInitialCluster } from './policy.ts';
import { bootstrapUpdates, unmadeSeed } from './cluster/bootstrap/index.ts';
import { judgedFromStatus } from './cluster/recovery/index.ts';
import type {
  AddLearnerParams,
  ClusterEvent,
  CreateMemberParams,
  DisruptionBudgetParams,
  EnableAuthParams,
  EnsureCertificatesParams,
  EnsureServicesParams,
  MemberParams,
  PromoteLearnerParams,
  RemoveEtcdMemberParams,
  RestoreParams,
  SnapshotHoldParams,
  SetDormantParams,
} from './types.ts';

type Of<T extends ClusterEvent['type']> = Extract<ClusterEvent, { type: T }>;

/** The spec as a target; a CA digest not read yet (no TLS, or its Secrets away) leaves the one latched before. */
const latched = (c: ClusterContext): ClusterContext['target'] =>
  c.spec && {
    ...c.spec,
    ...(c.spec.trust === undefined && c.target?.trust !== undefined ? { trust: c.target.trust } : {}),
  };

/** Context updates by name; each also moves `now` to the event's time (kit.ts). */
const updates = {
  observeSpec: (c, e) => {
    const {
      spec,
      progressDeadlineSeconds,
      restore,
      restoreSnapshot,
      upgradeSnapshot,
      snapshotCount,
      maintenance,
      volumeSize,
      certificates,
      auth,
      recovery,
      recoveryHandled,
    } = e as Of<'k8s.cluster.updated'>;
    return {
      ...observeMaintenance(c, maintenance, e.at),
      spec: {
        replicas: spec.replicas,
        version: spec.version,
        ...(spec.trust !== undefined ? { trust: spec.trust } : {}),
      },
      progressDeadlineSeconds,
      upgradeSnapshotWanted: upgradeSnapshot === true,
      snapshotCount: snapshotCount ?? DEFAULT_SNAPSHOT_COUNT,
      ...(volumeSize !== undefined ? { volumeSize } : {}),
      certificatesWanted: certificates === true,
      authWanted: auth === true,
      ...(restore && !c.restore
        ? { restore: { verified: false, ...(restoreSnapshot !== undefined ? { snapshot: restoreSnapshot } : {}) } }
        : {}),
      recoveryAsked: recovery ?? null,
      ...judgedFromStatus(c, recoveryHandled),
    };
  },
  observeRestoreJob: (c, e) =>
    c.restore ? { restore: { ...c.restore, job: (e as Of<'k8s.restoreJob.observed'>).job } } : {},
  observeDeleted: () => ({ deleting: true }),
  // Names are never reused: a member seen with ordinal k means the next is above k, even for a
  // machine that starts without its journal and adopts a running cluster.
  observeMembers: (c, e) => {
    const { members } = e as Of<'k8s.members.listed'>;
    return {
      members,
      membersSeen: true,
      nextOrdinal: Math.max(c.nextOrdinal, ...members.map((m) => m.ordinal + 1)),
      unwellSince: unwellSince({ ...c, members }, e.at),
    };
  },
  // A machine adopting a running cluster latches the ID its members answer with.
  observeEtcd: (c, e) => {
    const { sizes, ...etcd } = (e as Of<'etcd.members.listed'>).etcd;
    return {
      unwellSince: unwellSince({ ...c, etcd, etcdError: null }, e.at),
      // Sizes move with every write: kept, the context would change (and be journaled) at every
      // probe. Only the members over the defragmentation threshold are kept, in whole MiB.
      etcd,
      fragmented: overThreshold(sizes, c.maintenance?.defrag),
      etcdStale: false,
      etcdError: null,
      clusterID: c.clusterID ?? (c.members.length > 0 ? etcd.clusterID : null),
    };
  },
  observeUnreachable: (c, e) => ({
    etcdError: (e as Of<'etcd.unreachable'>).error,
    unwellSince: c.unwellSince ?? e.at,
  }),
  observeTime: () => ({}),
  latchTarget: (c) => ({ target: latched(c) }),
  // Between two steps a roll with members to go keeps its replicas: the scale waits for it.
  latchBetweenSteps: (c) => {
    const next = latched(c);
    return { target: next && latchDuringRoll(c, next) };
  },
  ...stepUpdates,
  // Nothing is retried in `failed`: no back-off is left for the runtime to wake the machine for.
  markFailed: () => ({ retryAt: null }),
  recordRestoreJob: (c, e) => {
    const location = 'result' in e && e.result && typeof e.result.location === 'string' ? e.result.location : undefined;
    return c.restore ? { restore: { ...c.restore, ...(location ? { location } : {}) } } : {};
  },
  markRestoreVerified: (c) => (c.restore ? { restore: { ...c.restore, verified: true } } : {}),
  // Asked for with holdSnapshot, in the same journaled step: a crash after it landed still lets it go.
  chooseRestoreHold: (c) => ({ holding: c.restore?.snapshot ?? null }),
  recordRestoreHeld: (c) => (c.restore ? { restore: { ...c.restore, held: true } } : {}),
  // The EtcdSnapshot named is being deleted (or gone) before any member exists: nothing can start from it.
  markRestoreGone: (c, e) => ({
    holding: null,
    retryAt: null,
    lastError: {
      code: ERR.SNAPSHOT_GONE,
      message: `EtcdSnapshot ${c.restore?.snapshot ?? ''}, named by spec.bootstrap.restore.snapshotName, cannot be held to restore from: ${failureOf(e)?.message ?? 'it is being deleted'}`,
      retryable: false,
    },
  }),
  // The snapshot failed its check: nothing is started from it, and nothing more is tried.
  markRestoreFailed: (c) => ({
    retryAt: null,
    lastError: {
      code: 'ERR_RESTORE_VERIFY',
      message: `the snapshot${c.restore?.location ? ` at ${c.restore.location}` : ''} failed its check: ${c.restore?.job?.failed ?? 'no reason given'}`,
      retryable: false,
    },
  }),
  // A seed chosen on entering `seeding` by a journal written before static starts stays chosen.
  chooseSeed: (c) =>
    unmadeSeed(c)
      ? {}
      : {
          joining: {
            member: memberName(c.cluster.name, c.nextOrdinal),
            ordinal: c.nextOrdinal,
            bootstrap: true,
            memberID: null,
            initialCluster: null,
          },
          nextOrdinal: c.nextOrdinal + 1,
        },
  // A seed left by a step that failed is not chosen again: its name may be what failed.
  dropSeed: (c) => (c.joining?.bootstrap ? { joining: null } : {}),
  chooseJoiner: (c) => ({
    joining: {
      member: memberName(c.cluster.name, c.nextOrdinal),
      ordinal: c.nextOrdinal,
      bootstrap: false,
      memberID: null,
      initialCluster: null,
    },
    nextOrdinal: c.nextOrdinal + 1,
  }),
  recordLearner: (c, e) => {
    const result = ('result' in e ? e.result : undefined) ?? {};
    return {
      joining: c.joining && {
        ...c.joining,
        memberID: String(result.memberID),
        initialCluster: String(result.initialCluster),
      },
    };
  },
  rememberJoiner: (c) => ({
    memberNames:
      c.joining && !c.memberNames.includes(c.joining.member) ? [...c.memberNames, c.joining.member] : c.memberNames,
  }),
  latchClusterID: (c) => ({ clusterID: c.etcd?.clusterID ?? null }),
  finishJoin: () => ({ joining: null, etcdStale: true }),
  // The joiner is lost: it stays in memberNames until it has left, as the replacement removes it.
  abandonJoin: () => ({ joining: null, etcdStale: true }),
  chooseVictim: (c) => ({ leaving: victim(c) }),
  chooseLost: (c) => {
    const lost = lostMember(c);
    return { leaving: lost ? { member: lost.name, peerURL: peerURL(c.cluster, lost.name) } : null };
  },
  finishLeave: (c) => ({
    memberNames: c.memberNames.filter((n) => n !== c.leaving?.member),
    leaving: null,
    etcdStale: true,
  }),
  chooseOrphan: (c) => ({ orphan: orphanMembers(c)[0] ?? null }),
  finishOrphan: () => ({ orphan: null, etcdStale: true }),
  // What the handler says it set: decide may want another by now, and then asks again.
  recordBudget: (c, e) => {
    const set = 'result' in e ? e.result?.minAvailable : undefined;
    return { disruptionBudget: typeof set === 'number' || set === null ? set : wantedBudget(c) };
  },
  markBootstrapped: () => ({ bootstrapped: true }),
  markAuthEnabled: () => ({ authEnabled: true }),
  markEtcdStale: () => ({ etcdStale: true }),
  // What the step a recovery interrupts had chosen: the survivor alone is left, and joins start anew.
  abandonForRecovery: () => ({ joining: null, leaving: null, orphan: null, upgrade: null }),
  ...bootstrapUpdates,
  ...CONCERN_UPDATES,
} satisfies Record<string, Update<ClusterContext, ClusterEvent>>;

/** The updates as xstate assign actions, by name. */
export const assigns = toAssigns<ClusterContext, ClusterEvent, typeof updates>(updates);

type Ctx = { context: ClusterContext };

/** createMember for the member being added (the seed, or a learner etcd already knows). */
export const createMemberParams = ({ context: c }: Ctx): CreateMemberParams => {
  const j = c.joining!;
  return {
    member: j.member,
    ordinal: j.ordinal,
    bootstrap: j.bootstrap,
    initialCluster: j.bootstrap ? seedInitialCluster(c.cluster, j.member) : (j.initialCluster ?? ''),
    version: c.target?.version ?? c.spec?.version ?? '',
    ...(c.target?.trust !== undefined ? { trust: c.target.trust } : {}),
  };
};

/** addLearner for the member being added. */
export const addLearnerParams = ({ context: c }: Ctx): AddLearnerParams => ({
  member: c.joining!.member,
  peerURL: peerURL(c.cluster, c.joining!.member),
});

/** promoteLearner for the member being added. */
export const promoteParams = ({ context: c }: Ctx): PromoteLearnerParams => ({
  member: c.joining!.member,
  memberID: c.joining!.memberID ?? '',
});

/** deleteMember for the member leaving. */
export const leavingParams = ({ context: c }: Ctx): MemberParams => ({ member: c.leaving?.member ?? '' });

/** removeEtcdMember for an orphan. */
export const orphanParams = ({ context: c }: Ctx): RemoveEtcdMemberParams => ({
  peerURL: c.orphan?.peerURL ?? '',
  memberID: c.orphan?.id ?? null,
  reason: 'no EtcdMember accounts for this etcd member',
});

/** ensureServices for this cluster. */
export const servicesParams = ({ context: c }: Ctx): EnsureServicesParams => ({ cluster: c.cluster.name });

/** ensureCertificates for this cluster. */
export const certificatesParams = ({ context: c }: Ctx): EnsureCertificatesParams => ({ cluster: c.cluster.name });

/** enableAuth for this cluster. */
export const authParams = ({ context: c }: Ctx): EnableAuthParams => ({ cluster: c.cluster.name });

/** setDormant for every member; waking, with the CA digest the cluster knows now. */
export const dormantParams =
  (dormant: boolean) =>
  ({ context: c }: Ctx): SetDormantParams => ({
    members: c.members.filter((m) => !m.deleting).map((m) => m.name),
    dormant,
    ...(!dormant && c.target?.trust !== undefined ? { trust: c.target.trust } : {}),
  });

/** setDisruptionBudget: the budget the cluster wants now. */
export const budgetParams = ({ context: c }: Ctx): DisruptionBudgetParams => ({
  cluster: c.cluster.name,
  minAvailable: wantedBudget(c),
});

/** holdSnapshot and releaseSnapshotHold for the EtcdSnapshot a new cluster starts from. */
export const restoreHoldParams = ({ context: c }: { context: ClusterContext }): SnapshotHoldParams => ({
  snapshot: c.holding ?? c.restore?.snapshot ?? '',
  cluster: c.cluster.name,
});

/** Parameters of createRestoreJob. */
export const restoreParams = ({ context: c }: { context: ClusterContext }): RestoreParams => ({
  cluster: c.cluster.name,
});
