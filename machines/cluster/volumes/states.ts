/**
 * Volume growth as states of the cluster machine: storage.size was raised, so each member's
 * claim is asked for it, one patch at a time, then every claim's capacity must show it (the
 * node grew the file system the Pod sees). A spec edit while a slow resize is awaited is
 * taken; the claims already asked are not asked again.
 */
import { attempt, restingState } from '../step-kit.ts';
import { TAG } from '../../tags.ts';
import { CLUSTER, idsUnder } from '../ids.ts';
import { growVolumeParams } from './steps.ts';

/** Ids of the volume states. */
export const VOLUMES = idsUnder('resizingVolumes', ['next', 'patching', 'awaitingCapacity']);

/** The `resizingVolumes` state. */
export const resizingVolumes = {
  entry: ['beginGrow', 'beginStep'],
  initial: 'next',
  states: {
    next: {
      always: [
        { guard: 'claimToPatch', target: VOLUMES.patching, actions: ['chooseClaim'] },
        { target: VOLUMES.awaitingCapacity },
      ],
    },
    patching: attempt(
      { target: VOLUMES.next, actions: ['recordPatched'] },
      { type: 'growVolume', params: growVolumeParams },
      [{ guard: 'expansionNotAllowed', target: CLUSTER.deciding, actions: ['markGrowRefused'] }],
    ),
    awaitingCapacity: {
      always: [
        { guard: 'volumesGrown', target: CLUSTER.observing, actions: 'finishGrow' },
        { guard: 'targetOutdated', target: CLUSTER.deciding, actions: 'latchTarget' },
        { guard: { type: 'otherStep', params: { decision: 'resizingVolumes' } }, target: CLUSTER.deciding },
      ],
    },
  },
} as const;

/**
 * The StorageClass refuses expansion: said, and tried again after GROW_RECHECK_MS or when the
 * size changes. Everything else goes on meanwhile; members made now get the new size.
 */
export const volumesRefused = restingState('volumesRefused', [TAG.resting, TAG.idle, TAG.warning]);
