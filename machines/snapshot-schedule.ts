/**
 * The schedule machine: one EtcdSnapshotSchedule. At each fire time it creates an EtcdSnapshot
 * named after that fire time, one at a time (Forbid), and deletes the snapshots its retention
 * drops, one at a time. Invariants it protects: a fire time runs at most once, even across a
 * crash between asking and hearing back (the fire time is journaled with the intent and the
 * name follows from it); a schedule never prunes its newest good backup; an invalid spec or a
 * suspended schedule creates and deletes nothing.
 *
 * Pure, like the other machines: time is the events' `at`, the snapshots are effects.
 */
import { setup } from 'xstate';
import { SCHEDULE_INTENTS, type ScheduleIntent } from './intents.ts';
import * as kit from './kit.ts';
import {
  assigns,
  decideSchedule,
  guards,
  initialScheduleContext,
  params,
  SCHEDULE_DECISIONS,
  type ScheduleContext,
  type ScheduleDecision,
  type ScheduleInput,
} from './snapshot-schedule-decide.ts';
import { TAG } from './tags.ts';
import type { ScheduleEvent } from './types.ts';

const STATE_OF: Record<ScheduleDecision, string> = {
  ending: '#schedule.ending',
  creating: '#schedule.creating',
  invalid: '#schedule.invalid',
  suspended: '#schedule.suspended',
  late: '#schedule.late',
  failed: '#schedule.failed',
  pruning: '#schedule.pruning',
  busy: '#schedule.busy',
  idle: '#schedule.idle',
};

const machine = setup({
  types: { context: {} as ScheduleContext, events: {} as ScheduleEvent, input: {} as ScheduleInput },
  actions: { ...kit.intentActions(SCHEDULE_INTENTS), ...assigns },
  guards: { ...guards, ...kit.stepGuards, ...kit.decisionGuards(decideSchedule) },
});

type StateConfig = NonNullable<Parameters<typeof machine.createMachine>[0]['states']>[string];
type ActionName = keyof typeof assigns;

/** Runs one intent; on failure waits out a back-off and runs it again, unless retrying cannot help. */
const attempt = (
  target: string,
  entry: kit.IntentEntry<ScheduleIntent['type'], ScheduleContext>,
  actions: ActionName[] = [],
): StateConfig => kit.attempt('schedule', { target, actions }, entry);

/** A state that rests until the decision changes. */
const resting = (decision: ScheduleDecision, tags: string[]): StateConfig => ({
  tags,
  always: { guard: kit.undecided(decision), target: '#schedule.deciding' },
});

/** The schedule machine (xstate v5). */
export const snapshotScheduleMachine = machine.createMachine({
  id: 'schedule',
  context: ({ input }) => initialScheduleContext(input),
  initial: 'pending',
  on: {
    'k8s.schedule.updated': { actions: 'observeSchedule' },
    'k8s.snapshots.listed': { actions: 'observeSnapshots' },
    'timer.tick': { actions: 'observeTime' },
  },
  states: {
    pending: { always: { guard: 'observed', target: 'deciding' } },
    deciding: kit.deciding(SCHEDULE_DECISIONS, STATE_OF),
    // Waiting for the next fire time: the manager wakes the machine then.
    idle: resting('idle', [TAG.resting, TAG.idle]),
    suspended: resting('suspended', [TAG.resting, TAG.idle]),
    // The cron expression, time zone or maxAge does not parse: nothing runs until the spec is edited.
    invalid: resting('invalid', [TAG.resting, TAG.idle, TAG.warning]),
    // A run is due and the previous snapshot still runs (Forbid): it starts when that one ends.
    busy: resting('busy', [TAG.idle]),
    // The fire times passed their starting deadline: counted as missed, and the schedule goes on.
    late: { entry: 'recordMissed', always: { target: 'deciding' } },
    // A create or delete failed in a way retrying cannot fix: tried again at the next run or edit.
    failed: resting('failed', [TAG.resting, TAG.idle, TAG.warning]),
    creating: {
      entry: 'beginStep',
      always: { guard: kit.undecided('creating'), target: '#schedule.deciding' },
      initial: 'choosing',
      states: {
        choosing: {
          always: [
            { guard: 'runChosen', target: 'asking' },
            { target: 'asking', actions: 'chooseRun' },
          ],
        },
        asking: attempt('#schedule.deciding', { type: 'createScheduledSnapshot', params: params.create }, [
          'recordCreated',
        ]),
      },
    },
    pruning: {
      entry: 'beginStep',
      always: { guard: kit.undecided('pruning'), target: '#schedule.deciding' },
      initial: 'choosing',
      states: {
        choosing: { always: { target: 'asking', actions: 'choosePrune' } },
        asking: attempt('#schedule.deciding', { type: 'deleteEtcdSnapshot', params: params.delete }, ['recordDeleted']),
      },
    },
    // Being deleted: no more runs. The EtcdSnapshots it made are not its to delete.
    ending: { tags: [TAG.resting, TAG.idle] },
  },
});
