/**
 * The rolling upgrade (a new version, or new CAs to trust) as states of the cluster machine:
 * one member at a time, wait until every voter is healthy and in sync, move leadership off it
 * if it leads, set its EtcdMember's version (its member machine restarts its Pod on it), and
 * wait until etcd answers from it, on the new version, in sync, before the next. A snapshot
 * first when spec.upgrade.snapshot asks for one; onto 3.7, every member's raft log flushed to a
 * snapshot on disk before the first restart; down a minor, etcd's downgrade enabled first (its
 * cluster and storage versions at the target's minor), and cancelled by a roll back above it. Each member ends in the coordinator's
 * `observing`, which keeps the roll's replicas until its last member (rules.ts latchDuringRoll).
 */
import * as kit from '../../kit.ts';
import { attempt } from '../step-kit.ts';
import { CLUSTER, idsUnder } from '../ids.ts';
import {
  abandonParams,
  downgradeParams,
  flushRaftLogParams,
  moveLeaderParams,
  upgradeParams,
  upgradeSnapshotParams,
} from './steps.ts';

/** Ids of the roll's states. */
export const ROLL = {
  ...idsUnder('upgrading', [
    'checkingSnapshot',
    'snapshotting',
    'awaitingHealth',
    'choosing',
    'cancellingDowngrade',
    'enablingDowngrade',
    'abandoningDowngrade',
    'flushingLog',
    'movingLeader',
    'awaitingLeader',
    'settingVersion',
    'awaitingMember',
  ]),
  ...idsUnder('upgrading.snapshotting', ['checking', 'creating', 'awaiting']),
};

const finished = { target: CLUSTER.observing, actions: 'finishUpgrade' } as const;

/** The `upgrading` state. */
export const upgrading = {
  entry: ['chooseUpgradee', 'beginStep'],
  initial: 'checkingSnapshot',
  states: {
    checkingSnapshot: {
      always: [{ guard: 'upgradeSnapshotNeeded', target: ROLL.snapshotting }, { target: ROLL.awaitingHealth }],
    },
    // spec.upgrade.snapshot: an EtcdSnapshot to its destination, Succeeded before any member restarts.
    snapshotting: {
      always: { guard: 'upgradeSnapshotUnwanted', target: ROLL.awaitingHealth, actions: 'markPreUpgradeDone' },
      initial: 'checking',
      states: {
        checking: { always: [{ guard: 'upgradeSnapshotListed', target: ROLL.awaiting }, { target: ROLL.creating }] },
        creating: {
          entry: 'clearPreUpgradeFailure',
          ...attempt({ target: ROLL.awaiting }, { type: 'createUpgradeSnapshot', params: upgradeSnapshotParams }),
        },
        awaiting: {
          always: [
            { guard: 'upgradeSnapshotSucceeded', target: ROLL.awaitingHealth, actions: 'markPreUpgradeDone' },
            {
              guard: 'upgradeSnapshotFailedRetargeted',
              target: CLUSTER.deciding,
              actions: ['finishUpgrade', 'latchTarget'],
            },
            { guard: 'upgradeSnapshotRetry', target: ROLL.creating },
          ],
        },
      },
    },
    awaitingHealth: {
      always: [
        { guard: 'upgradeeGone', ...finished },
        { guard: kit.undecided('upgrading'), target: CLUSTER.deciding, actions: 'finishUpgrade' },
        { guard: 'readyToRestart', target: ROLL.choosing },
      ],
    },
    choosing: {
      always: [
        { guard: 'downgradeCancelNeeded', target: ROLL.cancellingDowngrade },
        { guard: 'downgradeNeeded', target: ROLL.enablingDowngrade },
        { guard: 'logFlushNeeded', target: ROLL.flushingLog },
        { guard: 'upgradeeLeads', target: ROLL.movingLeader },
        { target: ROLL.settingVersion },
      ],
    },
    // Above the minor a downgrade brought the cluster to: etcd's downgrade cancelled first, so
    // that the cluster version follows the members up again.
    cancellingDowngrade: attempt(
      { target: ROLL.choosing, actions: ['markDowngradeCancelled'] },
      { type: 'cancelDowngrade', params: downgradeParams },
    ),
    // Down a minor, once, before the first member restarts: etcd's downgrade enabled, and every
    // member's cluster and storage versions at the target's minor (rules.ts downgradeNeeded).
    enablingDowngrade: attempt(
      { target: ROLL.choosing, actions: ['markDowngradeEnabled'] },
      { type: 'enableDowngrade', params: downgradeParams },
      [{ guard: 'downgradeRetargeted', target: ROLL.abandoningDowngrade, actions: [] }],
    ),
    // The spec changed while the downgrade had not come down yet (refused, or a member down: etcd
    // lowers the cluster version only once it hears from every member). etcd may hold it enabled,
    // and would lower the cluster version later under the new spec: cancelled before it is taken.
    abandoningDowngrade: attempt(
      { target: CLUSTER.deciding, actions: ['markDowngradeCancelled', 'finishUpgrade', 'latchTarget'] },
      { type: 'cancelDowngrade', params: abandonParams },
    ),
    // Onto 3.7 from an older minor, once, before the first member restarts: every member writes
    // its raft log to a snapshot on disk, past any entry etcd 3.5 wrote there (rules.ts).
    flushingLog: attempt(
      { target: ROLL.choosing, actions: ['markLogFlushed'] },
      { type: 'flushRaftLog', params: flushRaftLogParams },
    ),
    movingLeader: attempt(
      { target: ROLL.awaitingLeader, actions: ['markEtcdStale'] },
      { type: 'moveLeader', params: moveLeaderParams },
    ),
    awaitingLeader: {
      always: [
        { guard: 'upgradeeGone', ...finished },
        { guard: 'leaderMoved', target: ROLL.settingVersion },
      ],
    },
    settingVersion: attempt({ target: ROLL.awaitingMember }, { type: 'setMemberVersion', params: upgradeParams }),
    awaitingMember: {
      always: [
        { guard: 'upgradeeGone', ...finished },
        { guard: 'upgradeeUpgraded', ...finished },
        { guard: 'stuckAndRetargeted', target: CLUSTER.deciding, actions: ['finishUpgrade', 'latchTarget'] },
      ],
    },
  },
} as const;
