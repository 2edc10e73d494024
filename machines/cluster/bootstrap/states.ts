/**
 * The static start as states of the cluster machine: the plan is written on entry (journaled
 * with the transition that asks for the first member), each planned EtcdMember is created in
 * turn (each member machine then makes its volume and Pod at once, so the Pods start together),
 * and the start ends when a quorum of them answers healthy.
 */
import { attempt } from '../step-kit.ts';
import { CLUSTER, idsUnder } from '../ids.ts';
import { startMemberParams } from './steps.ts';

/** Ids of the start's states. */
export const STARTING = idsUnder('bootstrapping.starting', ['choosing', 'creatingMember', 'awaitingQuorum']);

/** The `bootstrapping.starting` state. */
export const starting = {
  entry: ['planStart', 'beginStep'],
  initial: 'choosing',
  states: {
    choosing: {
      always: [{ guard: 'startCreated', target: STARTING.awaitingQuorum }, { target: STARTING.creatingMember }],
    },
    creatingMember: attempt(
      { target: STARTING.choosing, actions: ['recordStartCreated'] },
      { type: 'createMember', params: startMemberParams },
    ),
    awaitingQuorum: {
      always: { guard: 'startQuorum', target: CLUSTER.observing, actions: ['latchClusterID', 'finishStart'] },
    },
  },
} as const;
