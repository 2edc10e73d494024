/**
 * Runs one object's machine, a step at a time, through the write-ahead journal:
 *
 *   event -> transition -> journal(event, transition, intents, snapshot) -> run intents
 *         -> journal(outcome) -> the outcome as the next event -> ...
 *
 * On start it resumes from the journal: every intent written but never answered goes to its
 * handler's `recover`, which observes whether it happened; only if it did not is it run.
 * A step is published (status.observed) before any of its intents runs, so a manager that
 * loses its journal resumes from the status with every intent that may have run (resume.ts).
 * One step at a time per object: `feed` calls queue behind each other.
 */
import {
  initialTransition,
  transition,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type SnapshotFrom,
} from 'xstate';
import { EffectError, type EffectContext, type Handler } from '../effects/types.ts';
import type { Journal, MachineName, ObjectRef, OpenIntent, TimelineRow } from '../journal/index.ts';
import { ERR } from '../machines/error-codes.ts';
import { failpoint, stateName, stepWindow } from './failpoints.ts';

/** Handlers by intent kind. */
export type Handlers<C extends EffectContext> = Readonly<
  Record<string, Handler<never, Readonly<Record<string, unknown>>, C>>
>;

/** An event as the runtime feeds it: stamped with its time. */
export interface RunnerEvent {
  readonly type: string;
  readonly at: number;
  readonly [field: string]: unknown;
}

/** What a runner needs. */
export interface RunnerOptions<C extends EffectContext, M extends AnyStateMachine = AnyStateMachine> {
  readonly journal: Journal;
  readonly ref: ObjectRef;
  readonly machineName: MachineName;
  readonly machine: M;
  /** The machine's input when the journal has nothing for this object yet. */
  readonly input: unknown;
  readonly handlers: Handlers<C>;
  /** A fresh context (with its deadline) for each effect call. */
  readonly context: () => C;
  /** The clock, for stamping outcome events. */
  readonly now: () => number;
  /**
   * Makes a journaled step known outside the journal (status.observed) before its intents run,
   * and again on resume; rejecting keeps them from running until it succeeds.
   */
  readonly publish?: (step: PublishedStep) => Promise<void>;
  /** Called after every journaled step is published, e.g. to log it and record an Event. */
  readonly onStep?: (step: RunnerStep) => Promise<void> | void;
  /** Called after every outcome is journaled: how the effect ended and how long it took. */
  readonly onOutcome?: (outcome: {
    readonly type: string;
    readonly ok: boolean;
    readonly recovered: boolean;
    readonly ms: number;
    /** The error code of a failure. */
    readonly code?: string;
  }) => void;
}

/** One journaled step, as onStep sees it. */
export interface RunnerStep {
  readonly seq: number;
  readonly from: unknown;
  readonly snapshot: AnyMachineSnapshot;
  readonly event: RunnerEvent;
  /** The intents the step asked for (journaled, not yet run). */
  readonly intents: readonly { readonly type: string }[];
}

/** A journaled step as it is published: the machine's snapshot after it and its intents with their params. */
export interface PublishedStep {
  readonly seq: number;
  /** The state before the step (the same as after, for a step published again on resume). */
  readonly from: unknown;
  readonly snapshot: AnyMachineSnapshot;
  readonly intents: readonly { readonly type: string; readonly params: Readonly<Record<string, unknown>> }[];
}

/** One object's machine, driven through the journal; its snapshot is typed by the machine M. */
export class Runner<C extends EffectContext, M extends AnyStateMachine = AnyStateMachine> {
  readonly #o: RunnerOptions<C, M>;
  #snapshot: AnyMachineSnapshot;
  #queue: Promise<void> = Promise.resolve();
  /** A step was journaled and could not be published: it is finished (published, its intents run) before anything else. */
  #unfinished = false;

  constructor(options: RunnerOptions<C, M>) {
    this.#o = options;
    const saved = options.journal.snapshot(options.ref.uid);
    const m = options.machine;
    if (saved) {
      const persisted = saved.state as { value: unknown; context: unknown };
      this.#snapshot = m.resolveState({ value: persisted.value as never, context: persisted.context });
    } else {
      const [initial, actions] = initialTransition(m, options.input as never);
      // Intents must be journaled; an initial state has none to journal them by.
      if (actions.length > 0)
        throw new EffectError(
          ERR.INITIAL_INTENTS,
          `machine ${options.machineName} asks for intents in its initial state`,
          { retryable: false },
        );
      this.#snapshot = initial;
    }
  }

  /** The machine's current snapshot. */
  get snapshot(): SnapshotFrom<M> {
    return this.#snapshot as SnapshotFrom<M>;
  }

  /**
   * Finishes the step the journal ended in: the intents of its last step are fed to the machine
   * as outcomes, the journaled ones as they were written, the unanswered ones after their
   * handler's recover (or run). A crash after an outcome was journaled and before the machine
   * took it leaves that outcome here, never lost. Rejects, leaving the rest open, when a
   * handler's recover cannot tell what happened.
   */
  resume(): Promise<void> {
    return this.#enqueue(null);
  }

  async #resume(): Promise<void> {
    const { journal, ref } = this.#o;
    const saved = journal.snapshot(ref.uid);
    const open = journal.openIntents(ref.uid);
    const last = saved
      ? journal.timeline({ uid: ref.uid }, { afterSeq: saved.seq - 1 }).filter((r) => r.seq === saved.seq)
      : [];
    const answered = new Map(last.filter((r) => r.entry === 'outcome').map((r) => [r.intentId, r] as const));
    const intents = last.filter((r) => r.entry === 'intent');
    // Published again before any intent runs: the status may lag the journal (a crash or a failed write between).
    if (saved)
      await this.#publish({
        seq: saved.seq,
        from: this.#snapshot.value,
        snapshot: this.#snapshot,
        intents: intents.map((r) => ({ type: r.name, params: (r.data ?? {}) as Record<string, unknown> })),
      });
    const outcomes: RunnerEvent[] = [];
    const resumed = `${this.#o.machineName}: resumed in ${stateName(this.#snapshot.value)}`;
    // Intents left open by an older step come first (none should: a step's outcomes are fed before the next).
    for (const intent of open.filter((i) => i.seq !== saved?.seq))
      outcomes.push(await this.#recoverOrRun(intent, resumed));
    for (const row of intents) {
      const outcome = answered.get(row.intentId);
      if (outcome) outcomes.push(journaledOutcome(row.name, outcome));
      else
        outcomes.push(
          await this.#recoverOrRun(
            { id: row.intentId ?? '', type: row.name, params: (row.data ?? {}) as Record<string, unknown> },
            resumed,
          ),
        );
    }
    for (const event of outcomes) await this.#step(event);
  }

  /** Feeds one event; resolves once it and every outcome it led to are journaled. */
  feed(event: RunnerEvent): Promise<void> {
    return this.#enqueue(() => this.#step(event));
  }

  /** Queues work (null: resume); a step left unpublished is finished first, as on resume. */
  #enqueue(work: (() => Promise<void>) | null): Promise<void> {
    const next = this.#queue.then(async () => {
      if (work === null || this.#unfinished) await this.#resume();
      await work?.();
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #step(event: RunnerEvent): Promise<void> {
    const from = this.#snapshot.value as unknown;
    const machine: AnyStateMachine = this.#o.machine;
    const [next, actions] = transition(machine, this.#snapshot as never, event as never);
    const intents = actions.map((a) => ({ type: a.type, params: a.params }));
    // An intent nobody carries out would leave the machine waiting for ever: refuse the step.
    const unhandled = intents.find((i) => !Object.hasOwn(this.#o.handlers, i.type));
    if (unhandled)
      throw new EffectError(
        ERR.NO_HANDLER,
        `machine ${this.#o.machineName} asked for ${unhandled.type}, which no effect handler carries out`,
        { retryable: false },
      );
    const unchanged = intents.length === 0 && sameState(next, this.#snapshot);
    this.#snapshot = next;
    // An observation that changed nothing but the clock is not journaled (probes repeat).
    if (unchanged) return;
    const window = (): string =>
      stepWindow(
        this.#o.machineName,
        from,
        event.type,
        next.value,
        intents.map((i) => i.type),
      );
    failpoint('before-journal-step', window);
    const recorded = this.#o.journal.recordStep(this.#o.ref, {
      machine: this.#o.machineName,
      event,
      from: from as never,
      to: next.value as never,
      state: this.#o.machine.getPersistedSnapshot(next),
      intents,
    });
    failpoint('after-journal-step', window);
    await this.#publish({ seq: recorded.seq, from, snapshot: next, intents });
    await this.#o.onStep?.({ seq: recorded.seq, from, snapshot: next, event, intents });
    failpoint('after-status', window);
    const outcomes: RunnerEvent[] = [];
    for (const [i, intent] of intents.entries()) {
      outcomes.push(
        await this.#run({ id: recorded.intentIds[i]!, type: intent.type, params: intent.params }, window()),
      );
    }
    for (const outcome of outcomes) await this.#step(outcome);
  }

  /** Publishes a step; until that succeeds the step stays unfinished and its intents do not run. */
  async #publish(step: PublishedStep): Promise<void> {
    this.#unfinished = true;
    await this.#o.publish?.(step);
    this.#unfinished = false;
  }

  /** `step`: the window of the step that asked for the intent (failpoints). */
  async #recoverOrRun(intent: Pick<OpenIntent, 'id' | 'type' | 'params'>, step: string): Promise<RunnerEvent> {
    const handler = this.#handler(intent.type);
    // A recover that cannot tell (it threw) is not taken as "not done": the intent stays open
    // and resume fails, to be tried again, rather than guessing and maybe repeating an effect.
    const started = this.#o.now();
    const recovered = await handler.recover(intent.params as never, this.#o.context());
    if (!recovered.done) return this.#run(intent, step);
    return this.#outcome(intent, { ok: true, result: recovered.result }, step, started, true);
  }

  async #run(intent: Pick<OpenIntent, 'id' | 'type' | 'params'>, step: string): Promise<RunnerEvent> {
    const handler = this.#handler(intent.type);
    let result: { ok: true; result: Readonly<Record<string, unknown>> } | { ok: false; error: EffectError };
    const started = this.#o.now();
    try {
      result = { ok: true, result: await handler.run(intent.params as never, this.#o.context()) };
    } catch (e) {
      const error =
        e instanceof EffectError
          ? e
          : new EffectError(ERR.EFFECT, e instanceof Error ? e.message : String(e), { cause: e });
      result = { ok: false, error };
    }
    failpoint('after-effect', () => `${step} | ${intent.type} ${result.ok ? 'ok' : 'failed'}`);
    return this.#outcome(intent, result, step, started);
  }

  #outcome(
    intent: Pick<OpenIntent, 'id' | 'type'>,
    r: { ok: true; result: Readonly<Record<string, unknown>> } | { ok: false; error: EffectError },
    step: string,
    started: number,
    recovered = false,
  ): RunnerEvent {
    const at = this.#o.now();
    this.#o.journal.recordOutcome(
      this.#o.ref,
      intent.id,
      r.ok
        ? { ok: true, result: r.result, at, recovered }
        : { ok: false, code: r.error.code, message: r.error.message, retryable: r.error.retryable, at },
    );
    failpoint('after-outcome', () => `${step} | ${intent.type} ${recovered ? 'recovered' : r.ok ? 'ok' : 'failed'}`);
    this.#o.onOutcome?.({
      type: intent.type,
      ok: r.ok,
      recovered,
      ms: at - started,
      ...(r.ok ? {} : { code: r.error.code }),
    });
    return r.ok
      ? { type: `effect.${intent.type}.succeeded`, at, result: r.result }
      : {
          type: `effect.${intent.type}.failed`,
          at,
          error: { code: r.error.code, message: r.error.message, retryable: r.error.retryable },
        };
  }

  #handler(kind: string): Handler<never, Readonly<Record<string, unknown>>, C> {
    const h = this.#o.handlers[kind];
    if (!h) throw new EffectError(ERR.NO_HANDLER, `no effect handler for intent ${kind}`, { retryable: false });
    return h;
  }
}

/**
 * The event an outcome row stands for, as the runner fed it when it was written: a permanent
 * failure stays permanent (a row written before the flag was kept reads as retryable, as it did).
 */
function journaledOutcome(kind: string, row: TimelineRow): RunnerEvent {
  const at = Date.parse(row.at);
  if (row.ok) return { type: `effect.${kind}.succeeded`, at, result: row.data ?? {} };
  const error = {
    code: row.code ?? ERR.EFFECT,
    message: row.message ?? '',
    ...(row.retryable === false ? { retryable: false } : {}),
  };
  return { type: `effect.${kind}.failed`, at, error };
}

/** Same state value and the same context but for `now`. */
function sameState(a: AnyMachineSnapshot, b: AnyMachineSnapshot): boolean {
  const strip = (s: AnyMachineSnapshot): string =>
    JSON.stringify({ value: s.value as unknown, context: { ...(s.context as object), now: 0 } });
  return strip(a) === strip(b);
}
