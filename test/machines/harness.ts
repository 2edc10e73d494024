/** Drives a machine through events as the runtime would, without running any intent. */
import { expect } from 'vitest';
import {
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type SnapshotFrom,
} from 'xstate';
import type { MemberObservation } from '../../machines/types.ts';

/** A state value flattened to a dotted path, e.g. `scalingUp.joining.addingLearner.running`. */
export function path(value: unknown): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0]!;
  return `${key}.${path(child)}`;
}

/** One intent as the runtime journals it. */
export interface Intent {
  readonly type: string;
  readonly params?: unknown;
}

/** A machine under test: feed events, read state and the intents of the last step. */
export class Driver<M extends AnyStateMachine> {
  snapshot: AnyMachineSnapshot;
  intents: Intent[];
  readonly machine: M;

  constructor(machine: M, input: unknown) {
    this.machine = machine;
    const [snapshot, actions] = initialTransition(machine, input as never);
    this.snapshot = snapshot;
    this.intents = actions.map((a) => ({ type: a.type, params: a.params }));
  }

  /** Feeds one event; returns the state path and the intents it produced. */
  send(event: EventFromLogic<M>): { state: string; intents: Intent[] } {
    const [snapshot, actions] = transition(this.machine, this.snapshot as never, event);
    this.snapshot = snapshot;
    this.intents = actions.map((a) => ({ type: a.type, params: a.params }));
    return { state: this.state, intents: this.intents };
  }

  get state(): string {
    return path(this.snapshot.value);
  }

  get context(): SnapshotFrom<M> extends { context: infer C } ? C : never {
    return this.snapshot.context as never;
  }

  /** Simulates a crash and restart: the snapshot goes through JSON (as the journal keeps it). */
  restart(): void {
    const persisted = JSON.parse(JSON.stringify(this.machine.getPersistedSnapshot(this.snapshot))) as {
      value: unknown;
      context: unknown;
    };
    this.snapshot = this.machine.resolveState({ value: persisted.value as never, context: persisted.context });
    this.intents = [];
  }
}

/** One row of a machine table: the event, the state after it, and (when given) exactly the intents. */
export type Step<M extends AnyStateMachine> = readonly [EventFromLogic<M>, string, Intent[]?];

/** Plays the rows and checks the state after each and, where given, the intents exactly. */
export function play<M extends AnyStateMachine>(d: Driver<M>, steps: readonly Step<M>[]): void {
  for (const [event, state, intents] of steps) {
    const out = d.send(event);
    expect(out.state, `after ${event.type}`).toBe(state);
    if (intents) expect(out.intents, `intents after ${event.type}`).toEqual(intents);
  }
}

/** Voters demo-0, demo-1... at these versions, demo-0 the bootstrap member, as the manager observes them. */
export const voters = (versions: readonly string[]): MemberObservation[] =>
  versions.map((version, i) => ({
    name: `demo-${i}`,
    ordinal: i,
    bootstrap: i === 0,
    dormant: false,
    state: 'voter',
    deleting: false,
    version,
  }));
