/**
 * The member machine: makes one etcd member real (volume, Pod, readiness), parks it, notices
 * when its data is gone, and under its EtcdMember's finalizer removes it from etcd before its
 * Pod and volume go. Invariants it protects: a member that ran never gets a new volume (it is
 * replaced instead); a seed starts a new cluster only before it ever ran; a member leaves etcd
 * before it lets go of its finalizer, unless its whole cluster is being deleted.
 *
 * Pure, like the cluster machine: it decides membership of nothing; it only reports.
 */
import { setup } from 'xstate';
import { MEMBER_INTENTS, type MemberIntent } from './intents.ts';
import * as kit from './kit.ts';
import {
  MEMBER_DECISIONS,
  decideMember,
  guards,
  initialMemberContext,
  type MemberContext,
  type MemberDecision,
  type MemberInput,
} from './member-decide.ts';
import * as act from './member-updates.ts';
import type { MemberMachineState } from './member-state.ts';
import { TAG, type Tag } from './tags.ts';
import type { MemberEvent } from './types.ts';

export { MEMBER_DECISIONS, decideMember, type MemberDecision } from './member-decide.ts';

/** The state each decision leads to: a member machine state's id, or one below it. */
const STATE_OF: Record<MemberDecision, `#member.${MemberMachineState}` | `#member.${MemberMachineState}.${string}`> = {
  removing: '#member.removing',
  replacing: '#member.replacing',
  nodeLost: '#member.nodeLost',
  parking: '#member.parking',
  creatingVolume: '#member.creatingVolume',
  bootstrapping: '#member.bootstrapping',
  joiningLearner: '#member.joiningLearner',
  rechecking: '#member.rechecking',
  restarting: '#member.restarting',
  upgrading: '#member.upgrading',
  catchingUp: '#member.joiningLearner.catchingUp',
  voter: '#member.voter',
};

const machine = setup({
  types: { context: {} as MemberContext, events: {} as MemberEvent, input: {} as MemberInput },
  actions: { ...kit.intentActions(MEMBER_INTENTS), ...act.assigns },
  guards: { ...guards, ...kit.stepGuards, ...kit.decisionGuards(decideMember) },
});

type StateConfig = NonNullable<Parameters<typeof machine.createMachine>[0]['states']>[string];
type ActionName = keyof typeof act.assigns;

/** Runs one intent; on failure waits out a back-off and runs it again, unless retrying cannot help. */
const attempt = (
  target: string,
  entry: kit.IntentEntry<MemberIntent['type'], MemberContext>,
  actions: ActionName[] = [],
): StateConfig => kit.attempt('member', { target, actions }, entry);

/**
 * Makes sure the member's Pod exists and waits until it is ready; leaves as soon as the decision
 * changes, even while a create is retried: a member being deleted must not wait on its Pod.
 */
function podStep(id: string, decision: MemberDecision): StateConfig {
  return {
    id,
    entry: 'beginStep',
    always: { guard: kit.undecided(decision), target: '#member.deciding' },
    initial: 'checking',
    states: {
      checking: { always: [{ guard: 'podMissing', target: 'creatingPod' }, { target: 'awaitingReady' }] },
      creatingPod: attempt(`#${id}.awaitingReady`, { type: 'createPod', params: act.params.member }, ['recordPod']),
      awaitingReady: {
        always: [
          { guard: 'podReady', target: '#member.deciding', actions: 'markRan' },
          { guard: kit.undecided(decision), target: '#member.deciding' },
          { guard: 'podMissing', target: 'creatingPod' },
        ],
      },
    },
  };
}

/** Stops the member's Pod (its volume stays), then rests until the decision changes, with `tags` once stopped. */
function stopped(id: string, decision: MemberDecision, tags: readonly Tag[] = []): StateConfig {
  return {
    id,
    entry: 'beginStep',
    initial: 'checking',
    states: {
      checking: { always: [{ guard: 'podPresent', target: 'stoppingPod' }, { target: 'stopped' }] },
      stoppingPod: attempt(`#${id}.awaitingGone`, { type: 'deletePod', params: act.params.member }),
      awaitingGone: { always: { guard: 'podMissing', target: 'stopped' } },
      stopped: {
        tags: [...tags],
        always: [
          { guard: kit.undecided(decision), target: '#member.deciding' },
          { guard: 'podPresent', target: 'stoppingPod' },
        ],
      },
    },
  };
}

/** A state at rest until the decision changes. */
const rest = (decision: MemberDecision, tags: readonly Tag[] = []): StateConfig => ({
  tags: [...tags],
  always: { guard: kit.undecided(decision), target: '#member.deciding' },
});

/** The member machine (xstate v5). */
export const memberMachine = machine.createMachine({
  id: 'member',
  context: ({ input }) => initialMemberContext(input),
  initial: 'pending',
  on: {
    'k8s.member.updated': { actions: 'observeMember' },
    'k8s.pod.observed': { actions: 'observePod' },
    'k8s.pvc.observed': { actions: 'observePVC' },
    'etcd.member.observed': { actions: 'observeEtcd' },
    'member.data.lost': { actions: 'observeDataLost' },
    'timer.tick': { actions: 'observeTime' },
  },
  states: {
    pending: { always: { guard: 'observed', target: 'deciding' } },
    deciding: kit.deciding(MEMBER_DECISIONS, STATE_OF),
    creatingVolume: {
      entry: 'beginStep',
      initial: 'creating',
      states: {
        creating: attempt('#member.creatingVolume.awaitingVolume', {
          type: 'createPVC',
          params: act.params.member,
        }),
        awaitingVolume: { always: { guard: 'volumePresent', target: '#member.deciding' } },
      },
    },
    bootstrapping: podStep('seedStart', 'bootstrapping'),
    joiningLearner: {
      initial: 'starting',
      states: { starting: podStep('learnerStart', 'joiningLearner'), catchingUp: rest('catchingUp') },
    },
    // etcd restarted inside its Pod, where check-data does not run: a new Pod checks the volume.
    rechecking: {
      entry: ['beginStep', 'beginRecheck'],
      initial: 'waiting',
      states: {
        waiting: {
          always: [
            { guard: kit.undecided('rechecking'), target: '#member.deciding' },
            { guard: 'retryDue', target: 'stoppingPod' },
          ],
        },
        stoppingPod: attempt('#member.rechecking.awaitingGone', {
          type: 'deletePod',
          params: act.params.member,
        }),
        awaitingGone: {
          always: { guard: kit.undecided('rechecking'), target: '#member.deciding' },
        },
      },
    },
    restarting: podStep('restart', 'restarting'),
    // Its spec names another etcd version than the one it ran: the Pod goes (etcd stops cleanly on
    // SIGTERM), and a new one runs the new version on the same volume and member ID.
    upgrading: {
      entry: 'beginStep',
      always: { guard: kit.undecided('upgrading'), target: '#member.deciding' },
      initial: 'checking',
      states: {
        checking: {
          always: [
            { guard: 'podOutdated', target: 'stoppingPod' },
            { guard: 'podMissing', target: 'creatingPod' },
            { target: 'awaitingReady' },
          ],
        },
        stoppingPod: attempt('#member.upgrading.awaitingGone', { type: 'deletePod', params: act.params.member }),
        // Once the old Pod is gone the decision is asked again: a spec set back to the version the
        // member ran makes it a plain restart.
        awaitingGone: { always: { guard: 'podMissing', target: '#member.deciding' } },
        creatingPod: attempt('#member.upgrading.awaitingReady', { type: 'createPod', params: act.params.member }, [
          'recordPod',
        ]),
        awaitingReady: {
          always: [
            { guard: kit.undecided('upgrading'), target: '#member.deciding' },
            { guard: 'podMissing', target: 'creatingPod' },
            { guard: 'podOutdated', target: 'stoppingPod' },
          ],
        },
      },
    },
    voter: rest('voter', [TAG.resting]),
    parking: stopped('park', 'parking', [TAG.resting]),
    // Waits, Pod stopped, for the cluster machine to delete this EtcdMember and join a new one.
    replacing: { ...stopped('replace', 'replacing'), tags: [TAG.warning], entry: ['markLost', 'beginStep'] },
    // Its node is down and Kubernetes evicts its Pod, or its node is gone and its volume with it:
    // it waits, as `replacing` does, for the cluster machine to delete this EtcdMember and join a
    // new one on a live node (during a bootstrap too: a learner that never started is replaced).
    nodeLost: { ...rest('nodeLost', [TAG.warning]), entry: 'beginStep' },
    removing: {
      entry: 'beginStep',
      initial: 'choosing',
      states: {
        choosing: {
          always: [
            { guard: 'clusterDeleting', target: 'releasing' },
            { guard: 'inNoCluster', target: 'releasing' },
            { target: 'leavingEtcd' },
          ],
        },
        leavingEtcd: {
          ...attempt('#member.removing.clearing', { type: 'removeEtcdMember', params: act.params.removal }),
          // The whole cluster went meanwhile (deleted, or its namespace): there is no etcd to leave,
          // and waiting for one would hold the finalizer, and the namespace, for ever.
          always: { guard: 'clusterDeleting', target: '#member.removing.releasing' },
        },
        // Out of etcd now: a Pod left on a lost node is deleted at once (grace 0), since no kubelet
        // will confirm it gone, and it would hold its claim (and the data) for ever. Should the node
        // come back, nothing of this member runs again there.
        clearing: { always: [{ guard: 'podEvicted', target: 'forcingPod' }, { target: 'releasing' }] },
        forcingPod: attempt('#member.removing.releasing', { type: 'forceDeletePod', params: act.params.forced }),
        releasing: attempt('#member.removed', {
          type: 'releaseFinalizer',
          params: act.params.member,
        }),
      },
    },
    // A failure that retrying cannot fix: nothing is tried until the step or what it is built
    // from changes (the EtcdMember or EtcdCluster is edited, the member is deleted or parked).
    failed: {
      // A failure trying again cannot help: counted as a failed step, its Events Warnings.
      tags: [TAG.resting, TAG.failed, TAG.warning],
      always: { guard: 'failureOutdated', target: 'deciding', actions: 'clearFailed' },
    },
    removed: { type: 'final', tags: [TAG.resting] },
  } satisfies Record<MemberMachineState, StateConfig>,
});
