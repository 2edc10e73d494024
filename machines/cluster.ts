/**
 * The cluster machine: decides which members exist and drives etcd membership, one change
 * at a time. Invariants it protects: one learner at a time, promoted only when etcd says it
 * is in sync; never shrink below a healthy quorum; a seed is created once, for an empty
 * cluster; spec edits made during a run of steps wait until its latched target is reached.
 *
 * Pure: observations, effect outcomes and time (`at`) arrive as events; intents leave as
 * named, parameterised actions that the runtime journals and hands to effect handlers.
 */
import { setup } from 'xstate';
import {
  DECISIONS,
  decide,
  initialClusterContext,
  liveVoters,
  outdatedMembers,
  preUpgradeSnapshot,
  retargeted,
  type ClusterContext,
  type Decision,
} from './cluster-decide.ts';
import * as maintenance from './cluster-maintenance-steps.ts';
import * as volumes from './cluster-volumes.ts';
import * as act from './cluster-updates.ts';
import { CLUSTER_INTENTS, type ClusterIntent } from './intents.ts';
import * as kit from './kit.ts';
import { etcdMemberFor, leadsWithSuccessor } from './policy.ts';
import { TAG } from './tags.ts';
import type { ClusterEvent, ClusterObjectRef } from './types.ts';

type Ctx = { context: ClusterContext };

/** The member being upgraded, as the cluster machine last listed it (undefined once it is gone). */
const upgradee = (c: ClusterContext) =>
  c.members.find((m) => m.name === c.upgrade?.member && !m.deleting && m.state !== 'replacing');

const etcdFresh = ({ context: c }: Ctx): boolean => !c.etcdStale && c.etcd !== null;

/** The step each decision leads to. */
const STATE_OF: Record<Decision, string> = {
  deleting: '#cluster.deleting',
  dormant: '#cluster.dormant',
  parking: '#cluster.parking',
  waking: '#cluster.waking',
  seeding: '#cluster.bootstrapping.seeding',
  observing: '#cluster.observing',
  removingOrphan: '#cluster.removingOrphan',
  enablingAuth: '#cluster.enablingAuth',
  replacing: '#cluster.replacing',
  updatingBudget: '#cluster.updatingBudget',
  bootstrapping: '#cluster.bootstrapping.joining',
  scalingUp: '#cluster.scalingUp',
  scalingDown: '#cluster.scalingDown',
  degraded: '#cluster.degraded',
  upgrading: '#cluster.upgrading',
  recoveringSpace: '#cluster.recoveringSpace',
  outOfSpace: '#cluster.outOfSpace',
  defragmenting: '#cluster.defragmenting',
  resizingVolumes: '#cluster.resizingVolumes',
  volumesRefused: '#cluster.volumesRefused',
  steady: '#cluster.steady',
};

const machine = setup({
  types: {
    context: {} as ClusterContext,
    events: {} as ClusterEvent,
    input: {} as { cluster: ClusterObjectRef },
  },
  actions: { ...kit.intentActions(CLUSTER_INTENTS), ...act.assigns },
  guards: {
    ...kit.stepGuards,
    ...maintenance.maintenanceGuards,
    ...volumes.volumeGuards,
    ...kit.decisionGuards(decide),
    targetOutdated: ({ context }) => retargeted(context),
    observed: ({ context }) => context.spec !== null && context.membersSeen,
    certificatesWanted: ({ context }) => context.certificatesWanted === true,
    etcdFresh,
    seedStarted: ({ context }) => {
      const seed = context.joining && etcdMemberFor(context.cluster, context.etcd, context.joining.member);
      return Boolean(seed && seed.name !== '' && context.etcd?.healthy.includes(seed.id));
    },
    joinerStarted: ({ context }) => {
      const joiner = context.joining && etcdMemberFor(context.cluster, context.etcd, context.joining.member);
      return Boolean(joiner && joiner.name !== '');
    },
    leaverGone: ({ context }) =>
      context.leaving !== null &&
      !context.members.some((m) => m.name === context.leaving?.member) &&
      !context.etcd?.members.some((m) => m.peerURL === context.leaving?.peerURL),
    allDormant: ({ context }) => context.members.filter((m) => !m.deleting).every((m) => m.state === 'dormant'),
    restoreUnverified: ({ context }) => context.restore !== undefined && !context.restore.verified,
    restoreJobPresent: ({ context }) => Boolean(context.restore?.job),
    restoreJobSucceeded: ({ context }) => Boolean(context.restore?.job?.succeeded),
    restoreJobFailed: ({ context }) => Boolean(context.restore?.job && context.restore.job.failed !== null),
    upgradeeGone: ({ context }) => upgradee(context) === undefined,
    // A roll takes its snapshot once, before its first member, unless told to go without.
    // Only a new version takes it: a roll onto new CAs changes no data.
    upgradeSnapshotNeeded: ({ context: c }) =>
      c.upgradeSnapshotWanted === true &&
      outdatedMembers(c).some((m) => m.version !== c.target?.version) &&
      c.preUpgradeDone !== c.target?.version &&
      preUpgradeSnapshot(c)?.phase !== 'Succeeded',
    upgradeSnapshotUnwanted: ({ context: c }) => c.upgradeSnapshotWanted !== true,
    upgradeSnapshotListed: ({ context: c }) => preUpgradeSnapshot(c) !== undefined,
    upgradeSnapshotSucceeded: ({ context: c }) => preUpgradeSnapshot(c)?.phase === 'Succeeded',
    // The failed snapshot was deleted: a new one is taken (the way to try again).
    upgradeSnapshotRetry: ({ context: c }) =>
      c.preUpgradeFailed === c.target?.version && preUpgradeSnapshot(c) === undefined,
    // A failed snapshot holds the roll until the spec changes (another version, or back).
    upgradeSnapshotFailedRetargeted: ({ context: c }) => preUpgradeSnapshot(c)?.phase === 'Failed' && retargeted(c),
    // A member is taken down only when every other voter answers, none trails the leader, and no
    // learner joins. Its own health does not count: one that does not run (an upgrade it could not
    // start, being undone) loses nothing by a restart.
    readyToRestart: ({ context: c }) => {
      const others = liveVoters(c).filter((v) => v.id !== c.upgrade?.memberID);
      return (
        etcdFresh({ context: c }) &&
        c.etcd !== null &&
        others.every((v) => c.etcd?.healthy.includes(v.id) && !c.etcd.behind?.includes(v.id)) &&
        !c.etcd.members.some((m) => m.learner)
      );
    },
    upgradeeLeads: ({ context: c }) => leadsWithSuccessor(c.etcd, c.upgrade?.memberID),
    leaderMoved: ({ context: c }) =>
      etcdFresh({ context: c }) && c.etcd?.leader != null && c.etcd.leader !== c.upgrade?.memberID,
    // Back on the new version and CAs: its Pod started with them and ready, etcd answering from
    // it with that version, in sync.
    upgradeeUpgraded: ({ context: c }) => {
      const id = c.upgrade?.memberID ?? '';
      const m = upgradee(c);
      return (
        m?.state === 'voter' &&
        m.version === c.target?.version &&
        (c.target?.trust === undefined || (m.trust === c.target.trust && m.podTrust === c.target.trust)) &&
        c.etcd !== null &&
        c.etcd.healthy.includes(id) &&
        c.etcd.versions?.[id] === m.version &&
        !(c.etcd.behind ?? []).includes(id)
      );
    },
    // A member that does not come back past the deadline holds the roll; a new spec (a fix, or
    // the version it left) is taken then instead of waiting for ever.
    stuckAndRetargeted: ({ context: c }) =>
      retargeted(c) && c.now - c.stepStartedAt >= c.progressDeadlineSeconds * 1000,
    // Another step comes first (quorum lost, a member to replace...); etcd's list after a change is awaited, not that.
    otherStep: ({ context }, p: { decision: Decision }) => ![p.decision, 'observing'].includes(decide(context)),
    allAwake: ({ context }) =>
      context.members.filter((m) => !m.deleting).every((m) => !m.dormant && m.state !== 'dormant'),
  },
});

type StateConfig = NonNullable<Parameters<typeof machine.createMachine>[0]['states']>[string];
type ActionName = keyof typeof act.assigns;

/** A state that runs one intent and, on failure, waits out a back-off before running it again. */
const attempt = (
  onSuccess: { target: string; actions?: ActionName[] },
  entry: kit.IntentEntry<ClusterIntent['type'], ClusterContext>,
): StateConfig => kit.attempt('cluster', onSuccess, entry);

/** The steps of adding one member: learner first, then its EtcdMember, then promotion. */
function joining(id: string): StateConfig {
  return {
    id,
    initial: 'addingLearner',
    entry: ['chooseJoiner', 'beginStep'],
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
        { target: '#cluster.observing', actions: ['finishJoin'] },
        { type: 'promoteLearner', params: act.promoteParams },
      ),
    },
  };
}

/** The steps of removing one member: delete its EtcdMember (whose finalizer removes it from etcd), then wait. */
function leaving(id: string, next: string, choose: 'chooseVictim' | 'chooseLost'): StateConfig {
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

/**
 * A run of defragmentation, one member at a time: wait until every voter is healthy and in sync,
 * move leadership off the member if it leads, defragment it, and wait until it answers again.
 * `decision` is the step it runs in: when decide wants another, the run waits for it to end.
 */
function defragWalk(id: string, decision: Decision, done: { target: string; actions?: ActionName[] }): StateConfig {
  const gone = { guard: 'defrageeGone', target: `#${id}.next`, actions: ['skipDefragee'] } as const;
  return {
    id,
    initial: 'next',
    states: {
      next: {
        always: [
          { guard: 'defragRunDone', target: done.target, actions: done.actions ?? [] },
          { target: 'awaitingHealth', actions: ['chooseDefragee', 'beginStep'] },
        ],
      },
      awaitingHealth: {
        always: [
          { guard: { type: 'otherStep', params: { decision } }, target: '#cluster.deciding' },
          gone,
          { guard: 'readyToDefrag', target: 'choosing' },
          // A spec edit while the run waits for health goes first (a scheduled run is skipped).
          ...(decision === 'defragmenting'
            ? [
                {
                  guard: 'targetOutdated',
                  target: '#cluster.deciding',
                  actions: ['abandonDefrag', 'latchTarget'],
                } as const,
              ]
            : []),
        ],
      },
      choosing: { always: [{ guard: 'defrageeLeads', target: 'movingLeader' }, { target: 'running' }] },
      movingLeader: attempt(
        { target: `#${id}.awaitingLeader`, actions: ['markEtcdStale'] },
        { type: 'moveLeader', params: maintenance.defragMoveLeaderParams },
      ),
      awaitingLeader: { always: [gone, { guard: 'defrageeLedOff', target: 'running' }] },
      running: attempt(
        { target: `#${id}.awaitingMember`, actions: ['recordDefragmented', 'markEtcdStale'] },
        { type: 'defragment', params: maintenance.defragmentParams },
      ),
      awaitingMember: {
        always: [
          { guard: 'defrageeGone', target: 'next', actions: ['admitOverThreshold'] },
          { guard: 'defrageeAnswers', target: 'next', actions: ['admitOverThreshold'] },
        ],
      },
    },
  };
}

/** The cluster machine (xstate v5). */
export const clusterMachine = machine.createMachine({
  id: 'cluster',
  context: ({ input }) => initialClusterContext(input.cluster),
  initial: 'pending',
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
    observing: { entry: 'beginStep', always: { guard: 'etcdFresh', target: 'deciding', actions: 'latchTarget' } },
    bootstrapping: {
      initial: 'seeding',
      states: {
        seeding: {
          entry: ['chooseSeed', 'beginStep'],
          initial: 'creatingServices',
          states: {
            // The headless Service gives members the DNS names their peer URLs use.
            creatingServices: attempt(
              { target: '#cluster.bootstrapping.seeding.checkingCertificates' },
              { type: 'ensureServices', params: act.servicesParams },
            ),
            checkingCertificates: {
              always: [{ guard: 'certificatesWanted', target: 'creatingCertificates' }, { target: 'checkingRestore' }],
            },
            // spec.tls names an issuer: its Certificates first, and the seed only once they are
            // Ready (a hold while cert-manager issues; trouble, named, if it lasts).
            creatingCertificates: attempt(
              { target: '#cluster.bootstrapping.seeding.awaitingCertificates' },
              { type: 'ensureCertificates', params: act.certificatesParams },
            ),
            awaitingCertificates: attempt(
              { target: '#cluster.bootstrapping.seeding.checkingRestore' },
              { type: 'checkCertificates', params: act.certificatesParams },
            ),
            checkingRestore: {
              always: [{ guard: 'restoreUnverified', target: 'verifyingRestore' }, { target: 'creatingSeed' }],
            },
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
                    target: '#cluster.bootstrapping.seeding.verifyingRestore.awaitingJob',
                    actions: ['recordRestoreJob'],
                  },
                  { type: 'createRestoreJob', params: act.restoreParams },
                ),
                awaitingJob: {
                  always: [
                    {
                      guard: 'restoreJobSucceeded',
                      target: '#cluster.bootstrapping.seeding.creatingSeed',
                      actions: 'markRestoreVerified',
                    },
                    { guard: 'restoreJobFailed', target: '#cluster.failed', actions: 'markRestoreFailed' },
                  ],
                },
              },
            },
            creatingSeed: attempt(
              { target: '#cluster.bootstrapping.seeding.awaitingSeed', actions: ['rememberJoiner'] },
              { type: 'createMember', params: act.createMemberParams },
            ),
            awaitingSeed: {
              always: { guard: 'seedStarted', target: '#cluster.observing', actions: ['latchClusterID', 'finishJoin'] },
            },
          },
        },
        joining: joining('bootstrapJoin'),
      },
    },
    scalingUp: { initial: 'joining', states: { joining: joining('scaleUpJoin') } },
    scalingDown: {
      initial: 'removing',
      states: { removing: leaving('scaleDownLeave', '#cluster.observing', 'chooseVictim') },
    },
    // The member whose data is gone leaves first, then a new member (a new name) joins.
    replacing: {
      tags: [TAG.warning],
      initial: 'removing',
      states: {
        removing: leaving('replaceLeave', '#replaceJoin', 'chooseLost'),
        joining: joining('replaceJoin'),
      },
    },
    removingOrphan: {
      entry: ['chooseOrphan', 'beginStep'],
      initial: 'removing',
      states: {
        removing: attempt(
          { target: '#cluster.observing', actions: ['finishOrphan'] },
          { type: 'removeEtcdMember', params: act.orphanParams },
        ),
      },
    },
    // spec.auth.enabled: the user root and etcd's authentication, once a quorum answers.
    enablingAuth: {
      entry: 'beginStep',
      ...attempt(
        { target: '#cluster.deciding', actions: ['markAuthEnabled'] },
        { type: 'enableAuth', params: act.authParams },
      ),
    },
    // The PodDisruptionBudget over the member Pods, set to what decide wants (wantedBudget).
    updatingBudget: {
      entry: 'beginStep',
      ...attempt(
        { target: '#cluster.deciding', actions: ['recordBudget'] },
        { type: 'setDisruptionBudget', params: act.budgetParams },
      ),
    },
    parking: {
      entry: 'beginStep',
      initial: 'parkingMembers',
      states: {
        parkingMembers: attempt(
          { target: '#cluster.parking.awaitingPark' },
          { type: 'setDormant', params: act.dormantParams(true) },
        ),
        awaitingPark: { always: { guard: 'allDormant', target: '#cluster.dormant' } },
      },
    },
    dormant: {
      tags: [TAG.resting, TAG.idle, TAG.dormant],
      always: [
        { guard: 'targetOutdated', target: 'deciding', actions: 'latchTarget' },
        { guard: kit.undecided('dormant'), target: 'deciding' },
      ],
    },
    waking: {
      entry: 'beginStep',
      initial: 'wakingMembers',
      states: {
        wakingMembers: attempt(
          { target: '#cluster.waking.awaitingWake' },
          { type: 'setDormant', params: act.dormantParams(false) },
        ),
        awaitingWake: { always: { guard: 'allAwake', target: '#cluster.observing', actions: 'markEtcdStale' } },
      },
    },
    // One member at a time: wait until every voter is healthy and in sync, move leadership off it
    // if it leads, set its EtcdMember's version (its member machine restarts its Pod on it), and
    // wait until etcd answers from it, on the new version, in sync, before the next.
    upgrading: {
      entry: ['chooseUpgradee', 'beginStep'],
      initial: 'checkingSnapshot',
      states: {
        checkingSnapshot: {
          always: [{ guard: 'upgradeSnapshotNeeded', target: 'snapshotting' }, { target: 'awaitingHealth' }],
        },
        // spec.upgrade.snapshot: an EtcdSnapshot to its destination, Succeeded before any member restarts.
        snapshotting: {
          always: {
            guard: 'upgradeSnapshotUnwanted',
            target: '#cluster.upgrading.awaitingHealth',
            actions: 'markPreUpgradeDone',
          },
          initial: 'checking',
          states: {
            checking: {
              always: [{ guard: 'upgradeSnapshotListed', target: 'awaiting' }, { target: 'creating' }],
            },
            creating: {
              entry: 'clearPreUpgradeFailure',
              ...attempt(
                { target: '#cluster.upgrading.snapshotting.awaiting' },
                { type: 'createUpgradeSnapshot', params: act.upgradeSnapshotParams },
              ),
            },
            awaiting: {
              always: [
                {
                  guard: 'upgradeSnapshotSucceeded',
                  target: '#cluster.upgrading.awaitingHealth',
                  actions: 'markPreUpgradeDone',
                },
                {
                  guard: 'upgradeSnapshotFailedRetargeted',
                  target: '#cluster.deciding',
                  actions: ['finishUpgrade', 'latchTarget'],
                },
                { guard: 'upgradeSnapshotRetry', target: 'creating' },
              ],
            },
          },
        },
        awaitingHealth: {
          always: [
            { guard: 'upgradeeGone', target: '#cluster.observing', actions: 'finishUpgrade' },
            { guard: kit.undecided('upgrading'), target: '#cluster.deciding', actions: 'finishUpgrade' },
            { guard: 'readyToRestart', target: 'choosing' },
          ],
        },
        choosing: { always: [{ guard: 'upgradeeLeads', target: 'movingLeader' }, { target: 'settingVersion' }] },
        movingLeader: attempt(
          { target: '#cluster.upgrading.awaitingLeader', actions: ['markEtcdStale'] },
          { type: 'moveLeader', params: act.moveLeaderParams },
        ),
        awaitingLeader: {
          always: [
            { guard: 'upgradeeGone', target: '#cluster.observing', actions: 'finishUpgrade' },
            { guard: 'leaderMoved', target: 'settingVersion' },
          ],
        },
        settingVersion: attempt(
          { target: '#cluster.upgrading.awaitingMember' },
          { type: 'setMemberVersion', params: act.upgradeParams },
        ),
        awaitingMember: {
          always: [
            { guard: 'upgradeeGone', target: '#cluster.observing', actions: 'finishUpgrade' },
            { guard: 'upgradeeUpgraded', target: '#cluster.observing', actions: 'finishUpgrade' },
            { guard: 'stuckAndRetargeted', target: '#cluster.deciding', actions: ['finishUpgrade', 'latchTarget'] },
          ],
        },
      },
    },
    // etcd's NOSPACE alarm refuses writes: compact the history, and if that leaves the data well
    // under the quota, defragment every member and disarm the alarm; else say what to do.
    recoveringSpace: {
      tags: [TAG.warning],
      entry: ['beginSpaceRecovery', 'beginStep'],
      initial: 'compacting',
      states: {
        compacting: attempt(
          { target: '#cluster.recoveringSpace.checking', actions: ['recordCompaction'] },
          { type: 'compact', params: maintenance.compactParams },
        ),
        checking: {
          always: [
            { guard: 'spaceFreeable', target: 'defragmenting', actions: 'beginSpaceDefrag' },
            { target: '#cluster.outOfSpace', actions: 'markSpaceNotFreed' },
          ],
        },
        defragmenting: defragWalk('spaceDefrag', 'recoveringSpace', { target: '#cluster.recoveringSpace.disarming' }),
        disarming: kit.attempt(
          'cluster',
          { target: '#cluster.observing', actions: ['finishSpaceRecovery'] },
          { type: 'disarmAlarm', params: maintenance.disarmParams },
          [
            {
              guard: 'spaceNotFreedFirstPass',
              target: '#cluster.recoveringSpace.compacting',
              actions: ['beginSecondPass'],
            },
            { guard: 'spaceNotFreed', target: '#cluster.outOfSpace', actions: ['markSpaceNotFreed'] },
          ],
        ),
      },
    },
    // NOSPACE, and what the data holds after compaction does not fit: the user raises the quota or
    // deletes data. Tried again after SPACE_RECHECK_MS, or at once when the quota changes.
    outOfSpace: {
      tags: [TAG.resting, TAG.idle, TAG.warning],
      always: [
        { guard: 'targetOutdated', target: 'deciding', actions: 'latchTarget' },
        { guard: kit.undecided('outOfSpace'), target: 'deciding' },
      ],
    },
    defragmenting: {
      entry: ['beginDefrag', 'beginStep'],
      ...defragWalk('defragRun', 'defragmenting', { target: '#cluster.observing', actions: ['finishDefrag'] }),
    },
    // storage.size was raised: each member's claim is asked for it, one patch at a time, then every
    // claim's capacity must show it (the node grew the file system the Pod sees). A spec edit while
    // a slow resize is awaited is taken; the claims already asked are not asked again.
    resizingVolumes: {
      entry: ['beginGrow', 'beginStep'],
      initial: 'next',
      states: {
        next: {
          always: [
            { guard: 'claimToPatch', target: 'patching', actions: ['chooseClaim'] },
            { target: 'awaitingCapacity' },
          ],
        },
        patching: kit.attempt(
          'cluster',
          { target: '#cluster.resizingVolumes.next', actions: ['recordPatched'] },
          { type: 'growVolume', params: volumes.growVolumeParams },
          [{ guard: 'expansionNotAllowed', target: '#cluster.deciding', actions: ['markGrowRefused'] }],
        ),
        awaitingCapacity: {
          always: [
            { guard: 'volumesGrown', target: '#cluster.observing', actions: 'finishGrow' },
            { guard: 'targetOutdated', target: '#cluster.deciding', actions: 'latchTarget' },
            { guard: { type: 'otherStep', params: { decision: 'resizingVolumes' } }, target: '#cluster.deciding' },
          ],
        },
      },
    },
    // The StorageClass refuses expansion: said, and tried again after GROW_RECHECK_MS or when the
    // size changes. Everything else goes on meanwhile; members made now get the new size.
    volumesRefused: {
      tags: [TAG.resting, TAG.idle, TAG.warning],
      always: [
        { guard: 'targetOutdated', target: 'deciding', actions: 'latchTarget' },
        { guard: kit.undecided('volumesRefused'), target: 'deciding' },
      ],
    },
    steady: {
      tags: [TAG.resting, TAG.idle, TAG.settled],
      entry: 'markBootstrapped',
      always: [
        { guard: 'targetOutdated', target: 'deciding', actions: 'latchTarget' },
        { guard: kit.undecided('steady'), target: 'deciding' },
      ],
    },
    // Nothing progresses here (it waits for a healthy quorum): Progressing is False, Degraded True.
    degraded: {
      tags: [TAG.resting, TAG.idle, TAG.warning],
      entry: 'beginStep',
      always: { guard: kit.undecided('degraded'), target: 'deciding' },
    },
    // A failure that trying again cannot help: nothing more is done until the spec changes.
    failed: {
      tags: [TAG.resting, TAG.idle],
      always: { guard: 'targetOutdated', target: 'deciding', actions: 'latchTarget' },
    },
    deleting: { type: 'final' },
  },
});
