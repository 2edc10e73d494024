/**
 * Recovery from a quorum lost for good as states of the cluster machine (spec.recovery): the
 * request is judged (refused with nothing changed, or a survivor chosen), the other members'
 * Pods are stopped, the survivor restarts once with --force-new-cluster and once more plainly,
 * the other EtcdMembers are deleted (out of etcd already, their finalizers let go at once), and
 * the coordinator's scale-up then joins new members as learners until spec.replicas voters run.
 * From a snapshot: the snapshot is found and judged, every member's Pod is stopped, a new seed
 * is restored from the snapshot (the bootstrap restore's init containers), and once it answers
 * alone the old EtcdMembers are deleted the same way; their volumes stay until then.
 */
import { TAG } from '../../tags.ts';
import { CLUSTER, idsUnder } from '../ids.ts';
import { attempt } from '../step-kit.ts';
import {
  deleteLostParams,
  forceParams,
  holdParams,
  readRevisionParams,
  resolveSnapshotParams,
  restartParams,
  seedMemberParams,
  seedParams,
  stopLostParams,
} from './steps.ts';

/** Ids of the recovery's states. */
export const RECOVERY = idsUnder('recovering', [
  'judging',
  'resolvingSnapshot',
  'checkingSnapshot',
  'holdingSnapshot',
  'snapshotHeld',
  'readingRevision',
  'stoppingLost',
  'awaitingStopped',
  'forcing',
  'awaitingForced',
  'unforcing',
  'awaitingPlain',
  'creatingSeed',
  'awaitingSeed',
  'removingSeed',
  'awaitingSeedGone',
  'releasing',
  'releasingSnapshot',
  'restartingStopped',
  'awaitingRestarted',
  'next',
  'deletingLost',
  'awaitingGone',
]);

/** The `recovering` state. */
export const recovering = {
  tags: [TAG.warning],
  entry: 'beginStep',
  initial: 'judging',
  states: {
    judging: {
      always: [
        { guard: 'recoveryRefused', target: CLUSTER.deciding, actions: 'refuseRecovery' },
        { guard: 'fromSnapshot', target: RECOVERY.resolvingSnapshot, actions: 'chooseSnapshotRecovery' },
        { target: RECOVERY.stoppingLost, actions: 'chooseSurvivor' },
      ],
    },
    // Which snapshot, read before anything is touched: none that may be restored is a refusal.
    resolvingSnapshot: attempt(
      { target: RECOVERY.checkingSnapshot, actions: ['recordSnapshot'] },
      { type: 'resolveRecoverySnapshot', params: resolveSnapshotParams },
      [{ guard: 'permanent', target: CLUSTER.deciding, actions: ['refuseSnapshotMissing'] }],
    ),
    checkingSnapshot: {
      always: [
        { guard: 'snapshotRefused', target: CLUSTER.deciding, actions: 'refuseSnapshot' },
        { target: RECOVERY.holdingSnapshot, actions: 'chooseHold' },
      ],
    },
    // The snapshot held before anything is touched, as Kubernetes holds a PVC a Pod uses: deleting
    // it now keeps its stored file until the restore no longer needs it. One already being
    // deleted cannot be held: refused, with nothing changed.
    holdingSnapshot: attempt({ target: RECOVERY.snapshotHeld }, { type: 'holdSnapshot', params: holdParams }, [
      { guard: 'permanent', target: CLUSTER.deciding, actions: ['refuseSnapshotGone'] },
    ]),
    snapshotHeld: {
      always: [{ guard: 'rollingBack', target: RECOVERY.readingRevision }, { target: RECOVERY.stoppingLost }],
    },
    // A rollback: the cluster's revision read before anything stops, so what is lost is a number.
    readingRevision: attempt(
      { target: RECOVERY.stoppingLost, actions: ['recordRevision'] },
      { type: 'readRevision', params: readRevisionParams },
    ),
    // No Pod of a lost member runs while the survivor forms a cluster of one: one back with its
    // data meanwhile would find itself removed, never a quorum of its own with another.
    stoppingLost: attempt({ target: RECOVERY.awaitingStopped }, { type: 'setDormant', params: stopLostParams }),
    awaitingStopped: {
      always: [
        { guard: 'stoppedForSeed', target: RECOVERY.creatingSeed, actions: 'chooseRecoverySeed' },
        { guard: 'lostStopped', target: RECOVERY.forcing },
      ],
    },
    // A new member (a new name) restored from the snapshot while the old volumes stay. A seed that
    // cannot be made (its EtcdSnapshot deleted meanwhile) ends the recovery refused, and the old
    // members, stopped for it, start again as they were: nothing was restored.
    creatingSeed: attempt(
      { target: RECOVERY.awaitingSeed, actions: ['recordSeedCreated'] },
      { type: 'createMember', params: seedParams },
      [{ guard: 'permanent', target: RECOVERY.releasing, actions: ['abandonSeed'] }],
    ),
    // etcd's last answer stays the cluster's view (not marked stale): a member restarted without a
    // quorum serves no client, and a next request is judged on what each member said before it stopped.
    restartingStopped: attempt({ target: RECOVERY.awaitingRestarted }, { type: 'setDormant', params: restartParams }),
    awaitingRestarted: {
      always: { guard: 'stoppedRestarted', target: CLUSTER.deciding, actions: 'finishRestart' },
    },
    awaitingSeed: {
      always: [
        { guard: 'seedRestored', target: RECOVERY.releasing, actions: 'latchRestoredClusterID' },
        { guard: 'seedUnrestorable', target: RECOVERY.removingSeed, actions: 'failSeed' },
      ],
    },
    // The seed cannot read the snapshot (its stored file gone or not what was stored): no retry
    // fixes that. It is deleted (it is in no etcd cluster: it never started), and the recovery
    // ends refused as if the seed could not be made.
    removingSeed: attempt({ target: RECOVERY.awaitingSeedGone }, { type: 'deleteMember', params: seedMemberParams }),
    awaitingSeedGone: { always: { guard: 'seedGone', target: RECOVERY.releasing, actions: 'abandonUnrestorable' } },
    // The snapshot let go once the restore no longer needs it: restored, or the recovery refused.
    releasing: {
      always: [
        { guard: 'snapshotHeld', target: RECOVERY.releasingSnapshot },
        { guard: 'restartingAfterRefusal', target: RECOVERY.restartingStopped },
        { target: RECOVERY.next },
      ],
    },
    releasingSnapshot: attempt(
      { target: RECOVERY.releasing, actions: ['recordReleased'] },
      { type: 'releaseSnapshotHold', params: holdParams },
    ),
    forcing: attempt(
      { target: RECOVERY.awaitingForced, actions: ['markEtcdStale'] },
      { type: 'setForceNewCluster', params: forceParams(true) },
    ),
    awaitingForced: { always: { guard: 'survivorForced', target: RECOVERY.unforcing } },
    // The flag acts once: the next start is plain, so a later restart never forces again.
    unforcing: attempt(
      { target: RECOVERY.awaitingPlain, actions: ['markEtcdStale'] },
      { type: 'setForceNewCluster', params: forceParams(false) },
    ),
    awaitingPlain: { always: { guard: 'survivorPlain', target: RECOVERY.next } },
    next: {
      always: [
        { guard: 'lostToDelete', target: RECOVERY.deletingLost, actions: 'chooseLostToDelete' },
        { target: RECOVERY.awaitingGone },
      ],
    },
    deletingLost: attempt(
      { target: RECOVERY.next, actions: ['recordDeleted'] },
      { type: 'deleteMember', params: deleteLostParams },
    ),
    awaitingGone: { always: { guard: 'lostGone', target: CLUSTER.observing, actions: 'finishRecovery' } },
  },
} as const;
