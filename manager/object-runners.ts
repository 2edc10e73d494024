/**
 * One Runner per object of each kind (kinds/index.ts), created on first sight and resumed from
 * the journal (open intents recovered first), and what each journaled step tells the world: the
 * object's status, an Event when the state changed, a log line and the metrics. A status or
 * Event that cannot be written is logged and written again by the next refresh; it stops a
 * step only when the step has intents: the object's resume annotation must carry them before they
 * run, so a manager that loses its journal resumes from the object (resume.ts). A runner is made
 * from the newer of the journal and the object's step. A runner made on a journal since replaced
 * (it was damaged) is made again on the new one, from the object's step, with a JournalReplaced Event.
 * What differs between kinds is read from the kind's entry; nothing here names a kind.
 */
import type { Logger } from 'pino';
import type { AnyMachineSnapshot, StateValue } from 'xstate';
import type { EtcdCluster, ObservedMachine } from '../api/v1alpha1/index.ts';
import { apiVersion } from '../api/v1alpha1/index.ts';
import { ConditionReason } from '../api/conditions.ts';
import { EventRecorder, type EventInput, type KubeClients, type KubeContext } from '../effects/kubernetes/index.ts';
import { EffectError, type ClusterRef, type EffectContext } from '../effects/types.ts';
import { stateName, type ObjectRef } from '../journal/index.ts';
import { ERR } from '../machines/error-codes.ts';
import { TAG, troubled, type StepFailures } from '../machines/index.ts';
import type { JournalKeeper } from './journal-keeper.ts';
import type { AnyEntry, ContextOf, Entry, KindName, KindSpec, MachineOf, ObjectOf, StatusOf } from './kinds/kind.ts';
import type { ManagerMetrics } from './metrics.ts';
import { patchAnnotation } from '../effects/kubernetes/index.ts';
import {
  briefObserved,
  journalObservedStep,
  newerSource,
  observedMachine,
  readResume,
  RESUME_ANNOTATION,
  resumeAnnotation,
} from './resume.ts';
import { Runner, type Handlers, type PublishedStep, type RunnerStep } from './runner.ts';

export type { AnyEntry, Entry } from './kinds/kind.ts';

/** What ObjectRunners needs. */
export interface ObjectRunnersOptions<C extends EffectContext> {
  readonly journal: JournalKeeper;
  readonly log: Logger;
  readonly metrics: ManagerMetrics;
  readonly kube: KubeClients;
  readonly handlers: Handlers<C>;
  readonly context: (cluster: ClusterRef) => C;
  readonly now: () => number;
}

/** The runners of every object, by work-queue key. */
export class ObjectRunners<C extends EffectContext & KubeContext> {
  readonly #o: ObjectRunnersOptions<C>;
  readonly #entries = new Map<string, AnyEntry<C>>();
  readonly #events = new EventRecorder();

  constructor(options: ObjectRunnersOptions<C>) {
    this.#o = options;
  }

  /** How many machines run. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Does one key's work on the journal in use, and reads an error of the journal through the
   * JournalKeeper: 'again' when the work is to be done again at once on a new journal (the journal
   * was damaged and replaced, or was replaced while the work ran). A runner whose journal failed
   * otherwise is made again from the journal the next time, as after a crash, and the error thrown.
   */
  async withJournal(key: string, work: () => Promise<void>): Promise<'done' | 'again'> {
    const generation = this.#o.journal.generation;
    try {
      await work();
      return 'done';
    } catch (err) {
      const verdict = this.#o.journal.failed(err, generation);
      if (verdict === 'replaced' || verdict === 'stale') return 'again';
      const entry = this.#entries.get(key);
      if (verdict === 'failed' && entry) entry.journalFailed = true;
      throw err;
    }
  }

  /** The work-queue keys of every runner. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /** The uids of the objects whose runners exist. */
  uids(): Set<string> {
    return new Set([...this.#entries.values()].map((e) => e.ref.uid));
  }

  /** Forgets the runner of an object that is gone (its journal stays); returns the object's uid. */
  drop(key: string): string | undefined {
    const uid = this.#entries.get(key)?.ref.uid;
    this.#entries.delete(key);
    return uid;
  }

  /** The object's runner, created and resumed on first use; `owner` is its EtcdCluster when it has one. */
  async entry<K extends KindName>(
    spec: KindSpec<K>,
    key: string,
    object: ObjectOf<K>,
    owner?: EtcdCluster,
  ): Promise<Entry<C, K>> {
    const { ref, cluster, input } = spec.identify(object, owner);
    let entry = this.#entries.get(key);
    if (entry && entry.ref.uid !== ref.uid) entry = undefined; // deleted and created again: a new object
    if (entry && entry.kind !== spec.kind) throw new Error(`${key} runs a ${entry.kind}'s machine`);
    // Of kind K: checked just above.
    let made = entry as Entry<C, K> | undefined;
    const { journal, generation } = this.#o.journal;
    const readopted = made !== undefined && made.generation !== generation;
    let resumedAt: number | undefined;
    if (!made || readopted || made.journalFailed) {
      const annotation = made?.resume === undefined ? object.metadata.annotations?.[RESUME_ANNOTATION] : made.resume;
      resumedAt = this.#fromStatus(spec, ref, made?.written ?? statusOf(object), annotation ?? undefined);
      made = this.#made(spec, key, object, ref, cluster, input, made?.written, made?.resume);
      made.seq = journal.snapshot(ref.uid)?.seq ?? 0;
      this.#entries.set(key, made as unknown as AnyEntry<C>);
    }
    made.object = object;
    if (readopted) await this.#journalReplaced(made, resumedAt);
    if (!made.resumed) {
      await made.runner.resume();
      made.resumed = true;
    }
    return made;
  }

  /** Writes the object's status again from its machine when it differs (a deadline passed, a write failed). */
  refresh<K extends KindName>(entry: Entry<C, K>): Promise<void> {
    const path = stateName(snapshotOf(entry).value as StateValue);
    return this.#writeStatus(entry, path, path);
  }

  /** A new entry, its runner made on the journal in use. */
  #made<K extends KindName>(
    spec: KindSpec<K>,
    key: string,
    object: ObjectOf<K>,
    ref: ObjectRef,
    cluster: ClusterRef,
    input: unknown,
    written: StatusOf<K> | undefined,
    resume: string | null | undefined,
  ): Entry<C, K> {
    const o = this.#o;
    const { journal, generation } = o.journal;
    const made: Entry<C, K> = {
      kind: spec.kind,
      spec,
      key,
      ref,
      cluster,
      object,
      generation,
      journalFailed: false,
      written,
      resume,
      observed: undefined,
      seq: 0,
      resumed: false,
      runner: new Runner<C, MachineOf<K>>({
        journal,
        ref,
        machineName: spec.machineName,
        machine: spec.machine,
        input,
        handlers: o.handlers,
        context: () => o.context(cluster),
        now: o.now,
        publish: (step) => this.#publish(made, step),
        onStep: (step) => this.#onStep(made, step),
        onOutcome: (r) => {
          o.log.debug(
            { object: `${ref.namespace}/${ref.name}`, intent: r.type, ok: r.ok, recovered: r.recovered, ms: r.ms },
            'intent outcome',
          );
          o.metrics.outcome(r);
        },
      }),
    };
    return made;
  }

  /**
   * Journals the step the object carries (its resume annotation, or status.observed as an older
   * manager wrote it) when it is later than the journal's (the journal was lost or damaged), so the
   * runner resumes from it; returns its sequence, undefined when the journal wins.
   */
  #fromStatus<K extends KindName>(
    spec: KindSpec<K>,
    ref: ObjectRef,
    status: { observed?: ObservedMachine } | undefined,
    annotation: string | undefined,
  ): number | undefined {
    const { journal } = this.#o.journal;
    const point = readResume(annotation, status?.observed);
    if (!point || newerSource(journal.snapshot(ref.uid)?.seq, point) !== 'status') return undefined;
    journalObservedStep(journal, ref, spec.machineName, spec.machine, point, this.#o.now());
    this.#o.log.info(
      {
        machine: spec.machineName,
        object: `${ref.namespace}/${ref.name}`,
        seq: point.seq,
        state: stateName(point.value),
        intents: point.intents.map((i) => i.type),
      },
      'resumed from the object (its resume annotation): the journal does not have this step',
    );
    return point.seq;
  }

  /** Tells, on the object, that its journal was damaged, and where its machine goes on from. */
  async #journalReplaced(entry: Regarding, resumedAt: number | undefined): Promise<void> {
    const movedTo = this.#o.journal.replaced?.movedTo ?? 'aside';
    const from =
      resumedAt === undefined
        ? `this ${entry.ref.kind} is adopted from what it shows`
        : `this ${entry.ref.kind} resumes from step ${resumedAt} of its resume annotation`;
    await this.#record(entry, {
      type: 'Warning',
      reason: ConditionReason.JournalReplaced,
      note: `the journal was damaged and kept as ${movedTo}; a new one was started, and ${from}`,
      action: 'ReplaceJournal',
    });
  }

  /**
   * Writes the step into the object's resume annotation, then its sequence and state into
   * status.observed (with the rest of the status), before its intents run; a write that fails
   * throws when the step has intents, so none runs before the object carries it.
   */
  async #publish<K extends KindName>(entry: Entry<C, K>, step: PublishedStep): Promise<void> {
    entry.seq = step.seq;
    const point = observedMachine(step.seq, step.snapshot, step.intents);
    entry.observed = briefObserved(point);
    const strict = step.intents.length > 0;
    const resume = resumeAnnotation(point);
    const { spec, ref } = entry;
    if (resume !== entry.resume)
      await this.#attempt(entry, strict, 'resume annotation not written; the next step writes it', async () => {
        await patchAnnotation(this.#o.context(entry.cluster), spec.watch.resource, ref.name, RESUME_ANNOTATION, resume);
        entry.resume = resume;
      });
    const from = stateName(step.from as never);
    const to = stateName(step.snapshot.value as never);
    await this.#writeStatus(entry, from, to, strict);
  }

  async #onStep<K extends KindName>(entry: Entry<C, K>, step: RunnerStep): Promise<void> {
    const o = this.#o;
    const from = stateName(step.from as never);
    const to = stateName(step.snapshot.value as never);
    const machine = entry.spec.machineName;
    o.metrics.stepped(machine, from, to, () =>
      step.snapshot.hasTag(TAG.failed) ? 'failed' : step.snapshot.hasTag(TAG.halted) ? 'halted' : 'finished',
    );
    if (step.intents.length > 0) o.metrics.eventToIntentSeconds.observe(Math.max(0, o.now() - step.event.at) / 1000);
    o.log.info(
      {
        machine,
        object: `${entry.ref.namespace}/${entry.ref.name}`,
        seq: step.seq,
        from,
        to,
        event: step.event.type,
        intents: step.intents.map((i) => i.type),
      },
      'step',
    );
    if (from !== to) await this.#event(entry, to, step.intents);
  }

  /**
   * Builds the status from the machine (with status.observed of the last published step) and writes
   * what differs; then the Warning the kind records when the status shows something newly wrong.
   */
  async #writeStatus<K extends KindName>(entry: Entry<C, K>, from: string, to: string, strict = false): Promise<void> {
    const { spec } = entry;
    const current = entry.written ?? statusOf(entry.object);
    const step = {
      seq: entry.seq,
      from,
      to,
      context: snapshotOf(entry).context as ContextOf<K>,
      generation: entry.object.metadata.generation ?? 0,
    };
    const built = spec.status(current, step, this.#o.now());
    // A cluster's status.observed says more than the step (the target, the step's name): the step is merged in.
    const observed = (built as { observed?: object }).observed;
    // What an older manager wrote into status.observed (the context, the intents) is now in the annotation: removed.
    const before = current?.observed;
    const older = before?.context != null || before?.intents != null ? { context: null, intents: null } : {};
    const status = entry.observed ? { ...built, observed: { ...observed, ...entry.observed, ...older } } : built;
    await this.#write(entry, status, strict, () =>
      spec.patch(this.#o.context(entry.cluster), entry.ref.name, status, current),
    );
    const warning = spec.warning?.(current, status);
    if (warning) await this.#record(entry, warning);
  }

  /** Writes a status; a failure is logged, and thrown too when `strict` (a step's intents wait for it). */
  async #write<K extends KindName>(
    entry: Entry<C, K>,
    status: StatusOf<K>,
    strict: boolean,
    patch: () => Promise<unknown>,
  ): Promise<void> {
    await this.#attempt(entry, strict, 'status not written; the next refresh writes it', async () => {
      try {
        await patch();
        entry.written = status;
      } catch (err) {
        // The informer's copy is the base again, so the next refresh writes every difference.
        entry.written = undefined;
        throw err;
      }
    });
  }

  /** Writes what `write` writes; a failure is logged as `message`, and thrown too when `strict`. */
  async #attempt(entry: Regarding, strict: boolean, message: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (err) {
      // An object that went (its finalizer released) has nothing to write.
      if (err instanceof EffectError && err.code === ERR.PATCH_STATUS_GONE) return;
      if (strict) throw err;
      this.#o.log.warn(
        { object: `${entry.ref.namespace}/${entry.ref.name}`, err: err instanceof Error ? err.message : String(err) },
        message,
      );
    }
  }

  async #event<K extends KindName>(entry: Entry<C, K>, to: string, intents: RunnerStep['intents']): Promise<void> {
    const snapshot = snapshotOf(entry);
    const described = entry.spec.describe(to, snapshot.context as ContextOf<K>);
    const warning = snapshot.hasTag(TAG.warning) || troubled(snapshot.context as StepFailures);
    await this.#record(entry, {
      type: warning ? 'Warning' : 'Normal',
      reason: described.step,
      note: described.message,
      action:
        intents.length > 0 ? intents.map((i) => i.type.charAt(0).toUpperCase() + i.type.slice(1)).join(',') : 'Observe',
    });
  }

  /** Records an Event about the entry's object; one that cannot be written is logged, never thrown. */
  async #record(entry: Regarding, event: Omit<EventInput, 'regarding'>): Promise<void> {
    try {
      await this.#events.record(this.#o.context(entry.cluster), {
        regarding: {
          apiVersion,
          kind: entry.ref.kind,
          name: entry.ref.name,
          namespace: entry.ref.namespace,
          uid: entry.ref.uid,
        },
        ...event,
      });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // A namespace being deleted refuses every new object, Events too: nothing to warn about.
      if (/because it is being terminated/.test(message)) return;
      this.#o.log.warn({ object: `${entry.ref.namespace}/${entry.ref.name}`, err: message }, 'Event not recorded');
    }
  }
}

/** The status an object has, as its kind's status type. */
const statusOf = <K extends KindName>(object: ObjectOf<K>): StatusOf<K> | undefined =>
  (object as { status?: StatusOf<K> }).status;

/** The runner's snapshot where the kind is not known: its value, context and tags. */
const snapshotOf = (entry: { readonly runner: { readonly snapshot: unknown } }): AnyMachineSnapshot =>
  entry.runner.snapshot as AnyMachineSnapshot;

/** What an Event about an entry's object names. */
type Regarding = Pick<Entry<EffectContext>, 'ref' | 'cluster'>;
