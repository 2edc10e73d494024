/**
 * Maintenance as states of the cluster machine: a defragmentation run (on a schedule or past a
 * threshold) and the recovery from etcd's NOSPACE alarm, which compacts, defragments every
 * member and disarms. Both walk the members the same way (`defragWalk`), one at a time.
 */
import { attempt, restingState } from '../step-kit.ts';
import { TAG } from '../../tags.ts';
import { CLUSTER, idsUnder } from '../ids.ts';
import { compactParams, defragMoveLeaderParams, defragmentParams, disarmParams } from './steps.ts';

const WALK = [
  'next',
  'awaitingHealth',
  'choosing',
  'movingLeader',
  'awaitingLeader',
  'running',
  'awaitingMember',
] as const;

/** Ids of the maintenance states. */
export const MAINTENANCE = {
  outOfSpace: '#cluster.outOfSpace',
  space: idsUnder('recoveringSpace', ['compacting', 'checking', 'defragmenting', 'disarming']),
  spaceDefrag: idsUnder('recoveringSpace.defragmenting', WALK),
  defragRun: idsUnder('defragmenting', WALK),
} as const;

/** The step a walk runs in: when decide wants another, the walk waits for it to end. */
type WalkStep = 'defragmenting' | 'recoveringSpace';

/**
 * A run of defragmentation, one member at a time: wait until every voter is healthy and in sync,
 * move leadership off the member if it leads, defragment it, and wait until it answers again.
 */
function defragWalk(
  ids: (typeof MAINTENANCE)['defragRun' | 'spaceDefrag'],
  decision: WalkStep,
  done: { readonly target: string; readonly actions?: readonly 'finishDefrag'[] },
) {
  const gone = { guard: 'defrageeGone', target: ids.next, actions: ['skipDefragee'] } as const;
  // A spec edit while the run waits for health goes first (a scheduled run is skipped).
  const edited =
    decision === 'defragmenting'
      ? [{ guard: 'targetOutdated', target: CLUSTER.deciding, actions: ['abandonDefrag', 'latchTarget'] } as const]
      : [];
  return {
    initial: 'next',
    states: {
      next: {
        always: [
          { guard: 'defragRunDone', target: done.target, actions: done.actions ?? [] },
          { target: ids.awaitingHealth, actions: ['chooseDefragee', 'beginStep'] },
        ],
      },
      awaitingHealth: {
        always: [
          { guard: { type: 'otherStep', params: { decision } }, target: CLUSTER.deciding },
          gone,
          { guard: 'readyToDefrag', target: ids.choosing },
          ...edited,
        ],
      },
      choosing: { always: [{ guard: 'defrageeLeads', target: ids.movingLeader }, { target: ids.running }] },
      movingLeader: attempt(
        { target: ids.awaitingLeader, actions: ['markEtcdStale'] },
        { type: 'moveLeader', params: defragMoveLeaderParams },
      ),
      awaitingLeader: { always: [gone, { guard: 'defrageeLedOff', target: ids.running }] },
      running: attempt(
        { target: ids.awaitingMember, actions: ['recordDefragmented', 'markEtcdStale'] },
        { type: 'defragment', params: defragmentParams },
      ),
      awaitingMember: {
        always: [
          { guard: 'defrageeGone', target: ids.next, actions: ['admitOverThreshold'] },
          { guard: 'defrageeAnswers', target: ids.next, actions: ['admitOverThreshold'] },
        ],
      },
    },
  } as const;
}

const S = MAINTENANCE.space;

/**
 * etcd's NOSPACE alarm refuses writes: compact the history, and if that leaves the data well
 * under the quota, defragment every member and disarm the alarm; else say what to do.
 */
export const recoveringSpace = {
  tags: [TAG.warning],
  entry: ['beginSpaceRecovery', 'beginStep'],
  initial: 'compacting',
  states: {
    compacting: attempt(
      { target: S.checking, actions: ['recordCompaction'] },
      { type: 'compact', params: compactParams },
    ),
    checking: {
      always: [
        { guard: 'spaceFreeable', target: S.defragmenting, actions: 'beginSpaceDefrag' },
        { target: MAINTENANCE.outOfSpace, actions: 'markSpaceNotFreed' },
      ],
    },
    defragmenting: defragWalk(MAINTENANCE.spaceDefrag, 'recoveringSpace', { target: S.disarming }),
    disarming: attempt(
      { target: CLUSTER.observing, actions: ['finishSpaceRecovery'] },
      { type: 'disarmAlarm', params: disarmParams },
      [
        { guard: 'spaceNotFreedFirstPass', target: S.compacting, actions: ['beginSecondPass'] },
        { guard: 'spaceNotFreed', target: MAINTENANCE.outOfSpace, actions: ['markSpaceNotFreed'] },
      ],
    ),
  },
} as const;

/**
 * NOSPACE, and what the data holds after compaction does not fit: the user raises the quota or
 * deletes data. Tried again after SPACE_RECHECK_MS, or at once when the quota changes.
 */
export const outOfSpace = restingState('outOfSpace', [TAG.resting, TAG.idle, TAG.warning]);

/** A defragmentation run on a schedule or past the threshold. */
export const defragmenting = {
  entry: ['beginDefrag', 'beginStep'],
  ...defragWalk(MAINTENANCE.defragRun, 'defragmenting', { target: CLUSTER.observing, actions: ['finishDefrag'] }),
} as const;
