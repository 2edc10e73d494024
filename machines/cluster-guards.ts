/**
 * The coordinator's guards by name: when the spec and members are known, when a seed or a
 * joiner has started, when a leaver is gone, where a restore check stands, and whether another
 * step comes first. The concerns' guards are in their folders (machines/cluster/<concern>/).
 */
import { decide, etcdFresh, joinerLost, retargeted, type ClusterContext, type Decision } from './cluster-decide.ts';
import { etcdMemberFor } from './policy.ts';
import { MEMBER_STATE } from './member-state.ts';

type Ctx = { context: ClusterContext };

/** The member being added, as etcd lists it (its name is empty until it started). */
const joiner = (c: ClusterContext) => c.joining && etcdMemberFor(c.cluster, c.etcd, c.joining.member);

/** Guards of the coordinator's steps, by name. */
export const coordinatorGuards = {
  targetOutdated: ({ context }: Ctx) => retargeted(context),
  observed: ({ context }: Ctx) => context.spec !== null && context.membersSeen,
  certificatesWanted: ({ context }: Ctx) => context.certificatesWanted === true,
  etcdFresh: ({ context }: Ctx) => etcdFresh(context),
  seedStarted: ({ context }: Ctx) => {
    const seed = joiner(context);
    return Boolean(seed && seed.name !== '' && context.etcd?.healthy.includes(seed.id));
  },
  joinerLost: ({ context }: Ctx) => joinerLost(context),
  joinerStarted: ({ context }: Ctx) => {
    const started = joiner(context);
    return Boolean(started && started.name !== '');
  },
  leaverGone: ({ context }: Ctx) =>
    context.leaving !== null &&
    !context.members.some((m) => m.name === context.leaving?.member) &&
    !context.etcd?.members.some((m) => m.peerURL === context.leaving?.peerURL),
  allDormant: ({ context }: Ctx) =>
    context.members.filter((m) => !m.deleting).every((m) => m.state === MEMBER_STATE.dormant),
  allAwake: ({ context }: Ctx) =>
    context.members.filter((m) => !m.deleting).every((m) => !m.dormant && m.state !== MEMBER_STATE.dormant),
  restoreUnverified: ({ context }: Ctx) => context.restore !== undefined && !context.restore.verified,
  // An EtcdSnapshot named, not held yet, and no seed made from it yet: held before anything reads it.
  restoreToHold: ({ context }: Ctx) =>
    context.restore?.snapshot !== undefined && context.restore.held !== true && !context.restore.verified,
  restoreJobPresent: ({ context }: Ctx) => Boolean(context.restore?.job),
  restoreJobSucceeded: ({ context }: Ctx) => Boolean(context.restore?.job?.succeeded),
  restoreJobFailed: ({ context }: Ctx) => Boolean(context.restore?.job && context.restore.job.failed !== null),
  // Another step comes first (quorum lost, a member to replace...); etcd's list after a change is awaited, not that.
  otherStep: ({ context }: Ctx, p: { decision: Decision }) => ![p.decision, 'observing'].includes(decide(context)),
};
