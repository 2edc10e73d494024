/**
 * The snapshot machine: one EtcdSnapshot, taken once. It puts its finalizer on, asks for a Job
 * that streams the snapshot from a healthy voter to S3 or a PVC and reads it back, and records
 * what the Job reports; with spec.verify, a second Job then proves it by a restore. Invariants it protects: it is Succeeded only with the report of an
 * object that was stored whole and checked; a snapshot of a cluster without quorum is refused,
 * not taken; a deleted EtcdSnapshot stops its Job before it deletes what the Job stored, so no
 * upload finishes after the delete.
 *
 * Pure, like the other machines: the Jobs and the stored object are effects.
 */
import { setup } from 'xstate';
import { SNAPSHOT_INTENTS, type SnapshotIntent } from './intents.ts';
import * as kit from './kit.ts';
import {
  assigns,
  decideSnapshot,
  guards,
  initialSnapshotContext,
  params,
  SNAPSHOT_DECISIONS,
  type SnapshotContext,
  type SnapshotDecision,
  type SnapshotInput,
} from './snapshot-decide.ts';
import { TAG } from './tags.ts';
import type { SnapshotEvent } from './types.ts';

const STATE_OF: Record<SnapshotDecision, string> = {
  removing: '#snapshot.removing',
  releasingHold: '#snapshot.releasingHold',
  verifying: '#snapshot.verifying',
  succeeded: '#snapshot.succeeded',
  failed: '#snapshot.failed',
  finalizing: '#snapshot.finalizing',
  waiting: '#snapshot.waiting',
  taking: '#snapshot.taking',
};

const machine = setup({
  types: { context: {} as SnapshotContext, events: {} as SnapshotEvent, input: {} as SnapshotInput },
  actions: { ...kit.intentActions(SNAPSHOT_INTENTS), ...assigns },
  guards: { ...guards, ...kit.stepGuards, ...kit.decisionGuards(decideSnapshot) },
});

type StateConfig = NonNullable<Parameters<typeof machine.createMachine>[0]['states']>[string];
type ActionName = keyof typeof assigns;
type GuardName = keyof typeof guards;

/** Runs one intent; on failure waits out a back-off and runs it again, unless retrying cannot help. */
const attempt = (
  target: string,
  entry: kit.IntentEntry<SnapshotIntent['type'], SnapshotContext>,
  actions: ActionName[] = [],
  failures: { guard: GuardName; target: string; actions: ActionName[] }[] = [],
): StateConfig => kit.attempt('snapshot', { target, actions }, entry, failures);

/** The snapshot machine (xstate v5). */
export const snapshotMachine = machine.createMachine({
  id: 'snapshot',
  context: ({ input }) => initialSnapshotContext(input),
  initial: 'pending',
  on: {
    'k8s.snapshot.updated': { actions: 'observeSnapshot' },
    'k8s.cluster.observed': { actions: 'observeCluster' },
    'k8s.job.observed': { actions: 'observeJob' },
    'k8s.deleteJob.observed': { actions: 'observeDeleteJob' },
    'k8s.verifyJob.observed': { actions: 'observeVerifyJob' },
    'timer.tick': { actions: 'observeTime' },
  },
  states: {
    pending: { always: { guard: 'observed', target: 'deciding' } },
    deciding: kit.deciding(SNAPSHOT_DECISIONS, STATE_OF),
    // The finalizer goes on before any Job: whatever a Job stores is deleted with the EtcdSnapshot.
    finalizing: {
      entry: 'beginStep',
      always: { guard: kit.undecided('finalizing'), target: '#snapshot.deciding' },
      ...attempt('#snapshot.deciding', { type: 'addSnapshotFinalizer', params: params.snapshot }, ['recordFinalizer']),
    },
    // The cluster has not been probed since the manager started: which members are healthy is not known yet.
    waiting: { always: { guard: kit.undecided('waiting'), target: '#snapshot.deciding' } },
    taking: {
      entry: 'beginStep',
      always: { guard: kit.undecided('taking'), target: '#snapshot.deciding' },
      initial: 'checking',
      states: {
        checking: {
          always: [
            { guard: 'jobPresent', target: 'running' },
            { target: 'creatingJob', actions: 'chooseMember' },
          ],
        },
        creatingJob: attempt('#snapshot.taking.running', { type: 'createSnapshotJob', params: params.job }, [
          'recordStart',
        ]),
        running: {
          always: [
            { guard: 'jobSucceeded', target: '#snapshot.deciding', actions: 'recordResult' },
            { guard: 'jobFailed', target: '#snapshot.failed', actions: 'markJobFailed' },
            { guard: 'jobVanished', target: 'creatingJob', actions: 'chooseMember' },
          ],
        },
      },
    },
    // Stored and checked; spec.verify asks for proof: a Job restores it into a throwaway etcd.
    verifying: {
      entry: 'beginStep',
      always: { guard: kit.undecided('verifying'), target: '#snapshot.deciding' },
      initial: 'checking',
      states: {
        checking: {
          always: [
            { guard: 'verifyJobPresent', target: 'running' },
            { target: 'creatingJob', actions: 'askVerify' },
          ],
        },
        creatingJob: attempt(
          '#snapshot.verifying.running',
          { type: 'createVerifyJob', params: params.snapshot },
          [],
          [{ guard: 'verifyCannotRun', target: '#snapshot.deciding', actions: ['markVerifyFailed'] }],
        ),
        running: {
          always: [
            { guard: 'verifyJobDone', target: '#snapshot.deciding', actions: 'recordVerification' },
            { guard: 'verifyJobFailed', target: '#snapshot.deciding', actions: 'markVerifyFailed' },
            { guard: 'verifyJobVanished', target: 'creatingJob', actions: 'askVerify' },
          ],
        },
      },
    },
    // The hold of an EtcdCluster gone or being deleted (deleted mid-restore): nothing restores for
    // it any more, and nothing else lets go of it. The snapshot stays what it was.
    releasingHold: {
      entry: 'beginStep',
      always: { guard: kit.undecided('releasingHold'), target: '#snapshot.deciding' },
      ...attempt('#snapshot.deciding', { type: 'releaseSnapshotHold', params: params.staleHold }, [
        'recordHoldReleased',
      ]),
    },
    succeeded: {
      tags: [TAG.resting],
      always: { guard: kit.undecided('succeeded'), target: 'deciding' },
    },
    // Failed for good: a snapshot is taken when asked or not at all. Only deleting it goes on.
    failed: {
      tags: [TAG.resting, TAG.warning],
      entry: 'markRefused',
      always: [
        { guard: 'removable', target: 'deciding' },
        { guard: 'staleHold', target: 'deciding' },
      ],
    },
    removing: {
      entry: 'beginStep',
      initial: 'choosing',
      states: {
        choosing: {
          always: [
            { guard: 'noFinalizer', target: '#snapshot.removed' },
            { guard: 'staleHold', target: 'releasingHold' },
            { guard: 'held', target: 'inUse' },
            { guard: 'jobActive', target: 'stoppingJob' },
            { guard: 'mustDeleteStored', target: 'deletingStored' },
            { target: 'releasing' },
          ],
        },
        // An EtcdCluster restores from it (its finalizer on it, as a Pod's use holds a PVC): what it
        // stored is kept until the cluster lets go, then deleted as ever.
        inUse: { always: { guard: 'notHeld', target: 'choosing' } },
        // The hold of a cluster gone or being deleted: nothing restores for it any more.
        releasingHold: attempt(
          '#snapshot.removing.choosing',
          { type: 'releaseSnapshotHold', params: params.staleHold },
          ['recordHoldReleased'],
        ),
        // Its Pods go before the Job does (foreground deletion): no upload can finish after this.
        stoppingJob: attempt('#snapshot.removing.awaitingJobGone', {
          type: 'deleteSnapshotJob',
          params: params.snapshot,
        }),
        awaitingJobGone: { always: { guard: 'jobGone', target: 'choosing' } },
        deletingStored: {
          initial: 'checking',
          states: {
            checking: {
              always: [{ guard: 'deleteJobPresent', target: 'running' }, { target: 'creatingJob' }],
            },
            // No Job can be created in a namespace being deleted: what was stored is kept rather
            // than the deletion of the namespace waiting for ever.
            creatingJob: attempt(
              '#snapshot.removing.deletingStored.running',
              { type: 'createSnapshotDeleteJob', params: params.snapshot },
              [],
              [{ guard: 'namespaceGoing', target: '#snapshot.removing.releasing', actions: ['markKept'] }],
            ),
            running: {
              always: [
                { guard: 'deleteJobSucceeded', target: '#snapshot.removing.releasing' },
                { guard: 'retain', target: '#snapshot.removing.releasing' },
                { guard: 'deleteJobFailed', target: 'stuck' },
              ],
            },
            // The stored snapshot could not be deleted: the finalizer stays until the Job is
            // deleted (to try again) or deletionPolicy is set to Retain (to keep the object).
            stuck: {
              tags: [TAG.warning],
              always: [
                { guard: 'retain', target: '#snapshot.removing.releasing' },
                { guard: 'deleteJobGone', target: 'creatingJob' },
              ],
            },
          },
        },
        releasing: attempt('#snapshot.removed', { type: 'releaseSnapshotFinalizer', params: params.snapshot }),
      },
    },
    removed: { type: 'final', tags: [TAG.resting] },
  },
});
