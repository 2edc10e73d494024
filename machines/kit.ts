/**
 * What both machines are built from: intents as named actions, a step that runs one intent
 * and backs off when it fails, the wiring of a `deciding` state to one decision function,
 * and the bookkeeping of a step's failures. A machine file then holds its states and rules.
 * Pure: time is the event's `at`, and the retry policy is `retryDelay` (policy.ts).
 */
import { assign, type MachineContext } from 'xstate';
import type { IntentKind, IntentParams } from './intents.ts';
import { permanentFailure, retryDelay } from './policy.ts';
import type { EffectFailure } from './types.ts';

/** What every machine's context keeps about the step in flight and its failures. */
export interface StepBookkeeping {
  readonly attempts: number;
  /** When the failed intent is run again; null when nothing waits. */
  readonly retryAt: number | null;
  readonly lastError: EffectFailure | null;
  readonly stepStartedAt: number;
  /** The time of the latest event: machines have no clock. */
  readonly now: number;
}

/** The bookkeeping of a machine that has not started a step. */
export const NO_STEP: StepBookkeeping = { attempts: 0, retryAt: null, lastError: null, stepStartedAt: 0, now: 0 };

/** Every machine event carries its time. */
export interface TimedEvent {
  readonly type: string;
  readonly at: number;
}

/** A context update: a pure function of (context, event). */
export type Update<C, E> = (c: C, e: E) => Partial<C>;

const noFailure = { attempts: 0, retryAt: null, lastError: null } as const;

/** The failure an effect outcome event reports, if it is one. */
export const failureOf = (e: object): EffectFailure | null =>
  'error' in e && typeof e.error === 'object' ? (e.error as EffectFailure) : null;

/** The bookkeeping updates every machine has. */
export const stepUpdates = {
  beginStep: (c: StepBookkeeping) => ({ ...noFailure, stepStartedAt: c.now }),
  clearFailure: () => noFailure,
  recordFailure: (c: StepBookkeeping, e: TimedEvent) => {
    const attempts = c.attempts + 1;
    const lastError = failureOf(e);
    return { attempts, retryAt: e.at + retryDelay(attempts, lastError?.code), lastError };
  },
};

/** The guards every machine has. */
export const stepGuards = {
  /** The effect failed in a way trying again cannot help. */
  permanent: ({ event }: { event: object }) => permanentFailure(event),
  retryDue: ({ context: c }: { context: StepBookkeeping }) => c.retryAt !== null && c.now >= c.retryAt,
};

/** An update as an xstate assign action; every update also moves `now` to the event's time. */
export type AssignAction<C extends MachineContext, E extends TimedEvent> = ReturnType<
  typeof assign<C, E, undefined, E, never>
>;

/** Updates by name as xstate assign actions, by the same names. */
export function toAssigns<
  C extends StepBookkeeping & MachineContext,
  E extends TimedEvent,
  U extends Record<string, Update<C, E>>,
>(updates: U): { readonly [K in keyof U]: AssignAction<C, E> } {
  const one = (update: Update<C, E>): AssignAction<C, E> =>
    assign<C, E, undefined, E, never>(({ context, event }) => ({
      ...update(context, event),
      now: Math.max(context.now, event.at),
    }));
  return Object.fromEntries(Object.entries(updates).map(([name, update]) => [name, one(update)])) as {
    readonly [K in keyof U]: AssignAction<C, E>;
  };
}

/**
 * The intents as named actions that do nothing: xstate returns them from `transition` with
 * their parameters, and the runtime journals and runs them.
 */
export function intentActions<K extends IntentKind>(
  kinds: readonly K[],
): { readonly [P in K]: (_: unknown, params: IntentParams[P]) => void } {
  const noop = (): void => undefined;
  return Object.fromEntries(kinds.map((k) => [k, noop])) as Record<K, typeof noop>;
}

/** An intent on a state's entry, its parameters a function of the context. */
export type IntentEntry<K extends IntentKind, C> = {
  [P in K]: { type: P; params: (args: { context: C }) => IntentParams[P] };
}[K];

/**
 * A state that runs one intent and, on failure, waits out a back-off (`retryAt`) before
 * running it again; a failure trying again cannot help goes to the machine's `failed` state
 * through its `markFailed` action.
 */
export function attempt<K extends IntentKind, A extends string, C, G extends string = never>(
  machine: string,
  onSuccess: { readonly target: string; readonly actions?: readonly A[] },
  entry: IntentEntry<K, C>,
  /** Failures handled before the back-off: the first whose guard holds takes the failure. */
  failures: readonly { readonly guard: G; readonly target: string; readonly actions: readonly A[] }[] = [],
) {
  const kind = entry.type;
  return {
    initial: 'running' as const,
    states: {
      running: {
        entry: [entry],
        on: {
          [`effect.${kind}.succeeded`]: {
            target: onSuccess.target,
            actions: ['clearFailure' as const, ...(onSuccess.actions ?? [])],
          },
          [`effect.${kind}.failed`]: [
            ...failures.map((f) => ({
              guard: f.guard,
              target: f.target,
              actions: ['recordFailure' as const, ...f.actions],
            })),
            {
              guard: 'permanent' as const,
              target: `#${machine}.failed`,
              actions: ['recordFailure' as const, 'markFailed' as const],
            },
            { target: 'backingOff', actions: 'recordFailure' as const },
          ],
        },
      },
      backingOff: { always: { guard: 'retryDue' as const, target: 'running' } },
    },
  };
}

/** The guards that compare a machine's one decision function with a decision. */
export function decisionGuards<C, D extends string>(decide: (c: C) => D) {
  return {
    decided: ({ context }: { context: C }, p: { decision: D }) => decide(context) === p.decision,
    undecided: ({ context }: { context: C }, p: { decision: D }) => decide(context) !== p.decision,
  };
}

/** The guard that holds once the decision is no longer `decision`. */
export const undecided = <D extends string>(decision: D) => ({ type: 'undecided' as const, params: { decision } });

/** A `deciding` state: goes to the state of the first decision that holds. */
export function deciding<D extends string>(decisions: readonly D[], stateOf: Readonly<Record<D, string>>) {
  return {
    always: decisions.map((decision) => ({
      guard: { type: 'decided' as const, params: { decision } },
      target: stateOf[decision],
    })),
  };
}
