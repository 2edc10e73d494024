/**
 * Recovery from a quorum lost for good as states of the cluster machine (spec.recovery): the
 * request is judged (refused with nothing changed, or a survivor chosen), the other members'
 * Pods are stopped, the survivor restarts once with --force-new-cluster and once more plainly,
 * the other EtcdMembers are deleted (out of etcd already, their finalizers let go at once), and
 * the coordinator's scale-up then joins new members as learners until spec.replicas voters run.
 */
import { TAG } from '../../tags.ts';
import { CLUSTER, idsUnder } from '../ids.ts';
import { attempt } from '../step-kit.ts';
import { deleteLostParams, forceParams, stopLostParams } from './steps.ts';

/** Ids of the recovery's states. */
export const RECOVERY = idsUnder('recovering', [
  'judging',
  'stoppingLost',
  'awaitingStopped',
  'forcing',
  'awaitingForced',
  'unforcing',
  'awaitingPlain',
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
        { target: RECOVERY.stoppingLost, actions: 'chooseSurvivor' },
      ],
    },
    // No Pod of a lost member runs while the survivor forms a cluster of one: one back with its
    // data meanwhile would find itself removed, never a quorum of its own with another.
    stoppingLost: attempt({ target: RECOVERY.awaitingStopped }, { type: 'setDormant', params: stopLostParams }),
    awaitingStopped: { always: { guard: 'lostStopped', target: RECOVERY.forcing } },
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
