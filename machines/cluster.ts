/**
 * The cluster machine, the coordinator of membership: decides which members exist and drives
 * etcd membership, one change at a time. Invariants it protects: a new cluster starts whole, its
 * members named and their initial cluster journaled before the first exists (cluster/bootstrap/);
 * growing and replacing go one learner at a time, promoted only when etcd says it is in sync;
 * never shrink below a healthy quorum; a seed (a restore, one member) is created once, for an
 * empty cluster; spec edits made during a run of steps wait until its
 * latched target is reached, and a scale waits for a roll's last member. The other concerns
 * (roll, maintenance, volumes) are states it enters and awaits, each in machines/cluster/.
 *
 * Pure: observations, effect outcomes and time (`at`) arrive as events; intents leave as
 * named, parameterised actions that the runtime journals and hands to effect handlers.
 */
import { setup } from 'xstate';
import { DECISIONS, decide, initialClusterContext, type ClusterContext, type Decision } from './cluster-decide.ts';
import { bootstrapGuards, starting } from './cluster/bootstrap/index.ts';
import { CONCERN_GUARDS, CONCERN_TOP_STATES } from './cluster/concerns.ts';
import { BOOTSTRAP, CLUSTER, PARKING, RESTORE, SEEDING, WAKING, type ClusterStep } from './cluster/ids.ts';
import { attempt, restingState } from './cluster/step-kit.ts';
import { coordinatorGuards } from './cluster-guards.ts';
import * as act from './cluster-updates.ts';
import { CLUSTER_INTENTS } from './intents.ts';
import * as kit from './kit.ts';
import { TAG } from './tags.ts';
import type { ClusterEvent, ClusterObjectRef } from './types.ts';

/** The step each decision leads to. */
const STATE_OF = {
  deleting: CLUSTER.deleting,
  dormant: CLUSTER.dormant,
  parking: CLUSTER.parking,
  waking: CLUSTER.waking,
  seeding: BOOTSTRAP.seeding,
  observing: CLUSTER.observing,
  removingOrphan: CLUSTER.removingOrphan,
  enablingAuth: CLUSTER.enablingAuth,
  replacing: CLUSTER.replacing,
  updatingBudget: CLUSTER.updatingBudget,
  bootstrapping: BOOTSTRAP.joining,
  scalingUp: CLUSTER.scalingUp,
  scalingDown: CLUSTER.scalingDown,
  degraded: CLUSTER.degraded,
  upgrading: CLUSTER.upgrading,
  recoveringSpace: CLUSTER.recoveringSpace,
  outOfSpace: CLUSTER.outOfSpace,
  defragmenting: CLUSTER.defragmenting,
  resizingVolumes: CLUSTER.resizingVolumes,
  volumesRefused: CLUSTER.volumesRefused,
  recovering: CLUSTER.recovering,
  steady: CLUSTER.steady,
} as const satisfies Record<Decision, string>;

const machine = setup({
  types: {
    context: {} as ClusterContext,
    events: {} as ClusterEvent,
    input: {} as { cluster: ClusterObjectRef },
  },
  actions: { ...kit.intentActions(CLUSTER_INTENTS), ...act.assigns },
  guards: {
    ...kit.stepGuards,
    ...CONCERN_GUARDS,
    ...kit.decisionGuards(decide),
    ...coordinatorGuards,
    ...bootstrapGuards,
  },
});

type StateConfig = NonNullable<Parameters<typeof machine.createMachine>[0]['states']>[string];

/** The ids of the join and leave runs, each the root of its own steps' targets (`#scaleUpJoin.promoting`). */
type JoinId = 'bootstrapJoin' | 'scaleUpJoin' | 'replaceJoin';
type LeaveId = 'scaleDownLeave' | 'replaceLeave';
const REPLACE_JOIN: `#${JoinId}` = '#replaceJoin';

/**
 * The steps of adding one member: learner first, then its EtcdMember, then promotion. A joiner
 * whose node is lost (before it started, or while it catches up) ends the join: it is replaced
 * from `observing` as any lost member is, its learner removed first (a learner holds no vote).
 */
function joining(id: JoinId): StateConfig {
  return {
    id,
    initial: 'addingLearner',
    entry: ['chooseJoiner', 'beginStep'],
    always: { guard: 'joinerLost', target: CLUSTER.observing, actions: ['abandonJoin'] },
    states: {
      addingLearner: attempt(
        { target: `#${id}.creatingMember`, actions: ['recordLearner'] },
        { type: 'addLearner', params: act.addLearnerParams },
      ),
      creatingMember: attempt(
        { target: `#${id}.awaitingStart`, actions: ['rememberJoiner'] },
        { type: 'createMember', params: act.createMemberParams },
      ),
      awaitingStart: { always: { guard: 'joinerStarted', target: 'promoting' } },
      promoting: attempt(
        { target: CLUSTER.observing, actions: ['finishJoin'] },
        { type: 'promoteLearner', params: act.promoteParams },
      ),
    },
  };
}

/** The steps of removing one member: delete its EtcdMember (whose finalizer removes it from etcd), then wait. */
function leaving(id: LeaveId, next: string, choose: 'chooseVictim' | 'chooseLost'): StateConfig {
  return {
    id,
    entry: [choose, 'beginStep'],
    initial: 'deletingMember',
    states: {
      deletingMember: attempt(
        { target: `#${id}.awaitingRemoval` },
        { type: 'deleteMember', params: act.leavingParams },
      ),
      awaitingRemoval: { always: { guard: 'leaverGone', target: next, actions: 'finishLeave' } },
    },
  };
}

/** The cluster machine (xstate v5). */
export const clusterMachine = machine.createMachine({
  id: 'cluster',
  context: ({ input }) => initialClusterContext(input.cluster),
  initial: 'pending',
  // A recovery asked is judged from any step: the step in flight (a join whose learner can no
  // longer be promoted, say) would otherwise hold it for ever. A refusal changes nothing.
  always: [
    { guard: 'recoveryInterrupts', target: '.recovering', actions: 'abandonForRecovery' },
    { guard: 'recoveryRefusedNow', actions: 'refuseRecovery' },
  ],
  on: {
    'k8s.cluster.updated': { actions: 'observeSpec' },
    'k8s.cluster.deleted': { target: '.deleting', actions: 'observeDeleted' },
    'k8s.members.listed': { actions: 'observeMembers' },
    'etcd.members.listed': { actions: 'observeEtcd' },
    'etcd.unreachable': { actions: 'observeUnreachable' },
    'k8s.restoreJob.observed': { actions: 'observeRestoreJob' },
    'k8s.upgradeSnapshots.listed': { actions: 'observeUpgradeSnapshots' },
    'k8s.claims.listed': { actions: 'observeClaims' },
    'timer.tick': { actions: 'observeTime' },
  },
  states: {
    // Both the spec and the members, whichever order they come in: members decide adopt or seed.
    pending: { tags: [TAG.idle], always: { guard: 'observed', target: 'deciding', actions: 'latchTarget' } },
    deciding: kit.deciding(DECISIONS, STATE_OF),
    // Between two steps: a spec edited meanwhile is taken here, never mid-step, so a member is
    // not added only to be removed when the target drops during a join.
    // A roll with members to go keeps its replicas here, so a scale waits for its last member.
    observing: {
      entry: 'beginStep',
      always: { guard: 'etcdFresh', target: 'deciding', actions: 'latchBetweenSteps' },
    },
    bootstrapping: {
      initial: 'seeding',
      states: {
        // Services, certificates and a restore's check; then the seed (a restore, one member), or
        // every member at once (`starting`).
        seeding: {
          entry: ['dropSeed', 'beginStep'],
          initial: 'creatingServices',
          states: {
            // The headless Service gives members the DNS names their peer URLs use.
            creatingServices: attempt(
              { target: SEEDING.checkingCertificates },
              { type: 'ensureServices', params: act.servicesParams },
            ),
            checkingCertificates: {
              always: [{ guard: 'certificatesWanted', target: 'creatingCertificates' }, { target: 'checkingRestore' }],
            },
            // spec.tls names an issuer: its Certificates first, and the seed only once they are
            // Ready (a hold while cert-manager issues; trouble, named, if it lasts).
            creatingCertificates: attempt(
              { target: SEEDING.awaitingCertificates },
              { type: 'ensureCertificates', params: act.certificatesParams },
            ),
            awaitingCertificates: attempt(
              { target: SEEDING.checkingRestore },
              { type: 'checkCertificates', params: act.certificatesParams },
            ),
            checkingRestore: {
              always: [
                { guard: 'restoreToHold', target: 'holdingRestore', actions: 'chooseRestoreHold' },
                { guard: 'restoreUnverified', target: 'verifyingRestore' },
                { guard: 'startsWhole', target: BOOTSTRAP.starting },
                { target: 'creatingSeed' },
              ],
            },
            // The EtcdSnapshot named is held (this cluster's finalizer on it) until the seed runs:
            // deleting it meanwhile keeps its stored file. One being deleted fails the cluster
            // before any member exists.
            holdingRestore: attempt(
              { target: SEEDING.checkingRestore, actions: ['recordRestoreHeld'] },
              { type: 'holdSnapshot', params: act.restoreHoldParams },
              [{ guard: 'permanent', target: CLUSTER.failed, actions: ['markRestoreGone'] }],
            ),
            // A cluster started from a snapshot: a Job reads it whole and checks it first, so a bad
            // one fails the cluster before any member exists.
            verifyingRestore: {
              initial: 'checking',
              states: {
                checking: {
                  always: [{ guard: 'restoreJobPresent', target: 'awaitingJob' }, { target: 'creatingJob' }],
                },
                creatingJob: attempt(
                  {
                    target: RESTORE.awaitingJob,
                    actions: ['recordRestoreJob'],
                  },
                  { type: 'createRestoreJob', params: act.restoreParams },
                ),
                awaitingJob: {
                  always: [
                    {
                      guard: 'restoreJobSucceeded',
                      target: SEEDING.creatingSeed,
                      actions: 'markRestoreVerified',
                    },
                    // Let go of first: a failed cluster restores nothing, and would hold its snapshot for ever.
                    { guard: 'restoreJobFailed', target: SEEDING.releasingRestore },
                  ],
                },
              },
            },
            // Chosen here, not on entering `seeding`: a cluster that starts whole has no seed.
            creatingSeed: {
              entry: ['chooseSeed'],
              ...attempt(
                { target: SEEDING.awaitingSeed, actions: ['rememberJoiner'] },
                { type: 'createMember', params: act.createMemberParams },
              ),
            },
            awaitingSeed: {
              always: {
                guard: 'seedStarted',
                target: SEEDING.releasingRestore,
                actions: ['latchClusterID', 'finishJoin'],
              },
            },
            // The seed runs from the snapshot (the others join as learners from it), or the snapshot
            // failed its check: the EtcdSnapshot is let go (a deletion of it waiting goes on).
            releasingRestore: {
              initial: 'choosing',
              states: {
                choosing: {
                  always: [
                    // The recovery's guard: one `holding` for either restore's hold.
                    { guard: 'snapshotHeld', target: 'releasing' },
                    { guard: 'restoreJobFailed', target: CLUSTER.failed, actions: 'markRestoreFailed' },
                    { target: CLUSTER.observing },
                  ],
                },
                releasing: attempt(
                  { target: '#cluster.bootstrapping.seeding.releasingRestore.choosing', actions: ['recordReleased'] },
                  { type: 'releaseSnapshotHold', params: act.restoreHoldParams },
                ),
              },
            },
          },
        },
        starting,
        joining: joining('bootstrapJoin'),
      },
    },
    scalingUp: { initial: 'joining', states: { joining: joining('scaleUpJoin') } },
    scalingDown: {
      initial: 'removing',
      states: { removing: leaving('scaleDownLeave', CLUSTER.observing, 'chooseVictim') },
    },
    // The member whose data is gone leaves first, then a new member (a new name) joins.
    replacing: {
      tags: [TAG.warning],
      initial: 'removing',
      states: {
        removing: leaving('replaceLeave', REPLACE_JOIN, 'chooseLost'),
        joining: joining('replaceJoin'),
      },
    },
    removingOrphan: {
      entry: ['chooseOrphan', 'beginStep'],
      initial: 'removing',
      states: {
        removing: attempt(
          { target: CLUSTER.observing, actions: ['finishOrphan'] },
          { type: 'removeEtcdMember', params: act.orphanParams },
        ),
      },
    },
    // spec.auth.enabled: the user root and etcd's authentication, once a quorum answers.
    enablingAuth: {
      entry: 'beginStep',
      ...attempt(
        { target: CLUSTER.deciding, actions: ['markAuthEnabled'] },
        { type: 'enableAuth', params: act.authParams },
      ),
    },
    // The PodDisruptionBudget over the member Pods, set to what decide wants (wantedBudget).
    updatingBudget: {
      entry: 'beginStep',
      ...attempt(
        { target: CLUSTER.deciding, actions: ['recordBudget'] },
        { type: 'setDisruptionBudget', params: act.budgetParams },
      ),
    },
    parking: {
      entry: 'beginStep',
      initial: 'parkingMembers',
      states: {
        parkingMembers: attempt(
          { target: PARKING.awaitingPark },
          { type: 'setDormant', params: act.dormantParams(true) },
        ),
        awaitingPark: { always: { guard: 'allDormant', target: CLUSTER.dormant } },
      },
    },
    dormant: restingState('dormant', [TAG.resting, TAG.idle, TAG.dormant]),
    waking: {
      entry: 'beginStep',
      initial: 'wakingMembers',
      states: {
        wakingMembers: attempt(
          { target: WAKING.awaitingWake },
          { type: 'setDormant', params: act.dormantParams(false) },
        ),
        awaitingWake: { always: { guard: 'allAwake', target: CLUSTER.observing, actions: 'markEtcdStale' } },
      },
    },
    // The concerns it starts and awaits (roll, maintenance, volumes), each from its folder.
    ...CONCERN_TOP_STATES,
    steady: { ...restingState('steady', [TAG.resting, TAG.idle, TAG.settled]), entry: 'markBootstrapped' },
    // Nothing progresses here (it waits for a healthy quorum): Progressing is False, Degraded True.
    degraded: {
      tags: [TAG.resting, TAG.idle, TAG.warning, TAG.degraded],
      entry: 'beginStep',
      always: { guard: kit.undecided('degraded'), target: 'deciding' },
    },
    // A failure that trying again cannot help: nothing more is done until the spec changes.
    failed: {
      tags: [TAG.resting, TAG.idle, TAG.halted, TAG.failed],
      always: { guard: 'targetOutdated', target: 'deciding', actions: 'latchTarget' },
    },
    deleting: { type: 'final', tags: [TAG.halted] },
  } satisfies Record<ClusterStep, StateConfig>,
});
