/**
 * Each concern of the cluster machine as a chart of its own: its states, with the cluster
 * machine's implementations (so intents and updates read as in the whole chart), framed by
 * the coordinator's states it goes back to (`deciding`, `observing`, `failed`), drawn empty,
 * and the observations the whole machine takes in any state.
 */
import { createMachine, type AnyStateMachine } from 'xstate';
import { clusterMachine } from '../machines/cluster.ts';
import { initialClusterContext } from '../machines/cluster-decide.ts';
import { CONCERN_STATES, type ConcernName } from '../machines/cluster/concerns.ts';

/** The coordinator's states a concern leaves for, as empty boxes (deleting: where any state goes on deletion). */
const FRAME = { deciding: {}, observing: {}, failed: {}, deleting: { type: 'final' } };

/** A concern's chart machine: the cluster machine's id and implementations, only its states. */
function concernMachine(states: Record<string, unknown>): AnyStateMachine {
  const ref = { namespace: 'NAMESPACE', name: 'NAME', uid: 'UID' };
  return createMachine(
    {
      id: 'cluster',
      initial: 'deciding',
      context: initialClusterContext(ref),
      // The observations every state takes, as in the whole machine.
      on: clusterMachine.config.on,
      states: { ...FRAME, ...states },
    } as never,
    clusterMachine.implementations as never,
  );
}

/** The concerns a chart can be drawn for on its own, by name. */
export const CONCERN_NAMES = Object.keys(CONCERN_STATES) as ConcernName[];

/** Each concern's chart machine, by name. */
export const CONCERN_MACHINES = Object.fromEntries(
  CONCERN_NAMES.map((name) => [name, concernMachine(CONCERN_STATES[name])]),
) as Record<ConcernName, AnyStateMachine>;
