/**
 * What the cluster machine's steps write into its context, and the parameters of its
 * intents, as small pure functions of (context, event).
 */
import { assign } from 'xstate';
import { initialClusterContext, lostMember, orphanMembers, victim, type ClusterContext } from './cluster-decide.ts';
import { memberName, peerURL, retryDelay, seedInitialCluster } from './policy.ts';
import type { ClusterEvent, CreateMemberParams, ObjectRef } from './types.ts';

type Update = (c: ClusterContext, e: ClusterEvent) => Partial<ClusterContext>;
/** Names of the context updates. */
export type UpdateName = keyof typeof updates;
type Of<T extends ClusterEvent['type']> = Extract<ClusterEvent, { type: T }>;
const at = (e: ClusterEvent): number => e.at;

/** Context updates by name; each also moves `now` to the event's time. */
const updates = {
  observeSpec: (_, e) => {
    const { spec, progressDeadlineSeconds } = e as Of<'k8s.cluster.updated'>;
    return { spec: { replicas: spec.replicas, version: spec.version }, progressDeadlineSeconds };
  },
  observeDeleted: () => ({ deleting: true }),
  // Names are never reused: a member seen with ordinal k means the next is above k, even for a
  // machine that starts without its journal and adopts a running cluster.
  observeMembers: (c, e) => {
    const { members } = e as Of<'k8s.members.listed'>;
    return { members, membersSeen: true, nextOrdinal: Math.max(c.nextOrdinal, ...members.map((m) => m.ordinal + 1)) };
  },
  // A machine adopting a running cluster latches the ID its members answer with.
  observeEtcd: (c, e) => {
    const { etcd } = e as Of<'etcd.members.listed'>;
    return {
      etcd,
      etcdStale: false,
      etcdError: null,
      clusterID: c.clusterID ?? (c.members.length > 0 ? etcd.clusterID : null),
    };
  },
  observeUnreachable: (_, e) => ({ etcdError: (e as Of<'etcd.unreachable'>).error }),
  observeTime: () => ({}),
  latchTarget: (c) => ({ target: c.spec }),
  beginStep: (c) => ({ stepStartedAt: c.now, attempts: 0, retryAt: null, lastError: null }),
  clearFailure: () => ({ attempts: 0, retryAt: null, lastError: null }),
  recordFailure: (c, e) => {
    const attempts = c.attempts + 1;
    const lastError = 'error' in e && typeof e.error === 'object' ? e.error : null;
    return { attempts, retryAt: e.at + retryDelay(attempts, lastError?.code), lastError };
  },
  // Nothing is retried in `failed`: no back-off is left for the runtime to wake the machine for.
  stopRetrying: () => ({ retryAt: null }),
  chooseSeed: (c) => ({
    joining: {
      member: memberName(c.cluster.name, c.nextOrdinal),
      ordinal: c.nextOrdinal,
      bootstrap: true,
      memberID: null,
      initialCluster: null,
    },
    nextOrdinal: c.nextOrdinal + 1,
  }),
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
  markBootstrapped: () => ({ bootstrapped: true }),
  markEtcdStale: () => ({ etcdStale: true }),
} satisfies Record<string, Update>;

const toAssign = (update: Update) =>
  assign<ClusterContext, ClusterEvent, undefined, ClusterEvent, never>(({ context, event }) => ({
    ...update(context, event),
    now: Math.max(context.now, at(event)),
  }));

/** The updates as xstate assign actions, by name. */
export const assigns = Object.fromEntries(
  Object.entries(updates).map(([name, update]) => [name, toAssign(update)]),
) as {
  readonly [K in keyof typeof updates]: ReturnType<typeof toAssign>;
};

/** The context of a cluster that has not been observed yet. */
export const initialContext = (cluster: ObjectRef): ClusterContext => initialClusterContext(cluster);

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
  };
};

/** addLearner for the member being added. */
export const addLearnerParams = ({ context: c }: Ctx) => ({
  member: c.joining!.member,
  peerURL: peerURL(c.cluster, c.joining!.member),
});

/** promoteLearner for the member being added. */
export const promoteParams = ({ context: c }: Ctx) => ({
  member: c.joining!.member,
  memberID: c.joining!.memberID ?? '',
});

/** deleteMember for the member leaving. */
export const leavingParams = ({ context: c }: Ctx) => ({ member: c.leaving?.member ?? '' });

/** removeEtcdMember for an orphan. */
export const orphanParams = ({ context: c }: Ctx) => ({
  peerURL: c.orphan?.peerURL ?? '',
  memberID: c.orphan?.id ?? null,
  reason: 'no EtcdMember accounts for this etcd member',
});

/** setDormant for every member. */
export const dormantParams =
  (dormant: boolean) =>
  ({ context: c }: Ctx) => ({ members: c.members.filter((m) => !m.deleting).map((m) => m.name), dormant });
