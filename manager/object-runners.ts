/**
 * One Runner per EtcdCluster, EtcdMember and EtcdSnapshot, created on first sight and resumed from the
 * journal (open intents recovered first), and what each journaled step tells the world: the
 * object's status, an Event when the state changed, a log line and the metrics. A status or
 * Event that cannot be written is logged and written again by the next refresh; it stops a
 * step only when the step has intents: status.observed must carry them before they run, so a
 * manager that loses its journal resumes from the status (resume.ts). A runner is made from the
 * newer of the journal and status.observed. A runner made on a journal since replaced (it was
 * damaged) is made again on the new one, from status.observed, with a JournalReplaced Event.
 */
import type { Logger } from 'pino';
import type { AnyStateMachine } from 'xstate';
import type {
  ObservedMachine,
  Condition,
  EtcdCluster,
  EtcdClusterStatus,
  EtcdMember,
  EtcdMemberStatus,
  EtcdSnapshot,
  EtcdSnapshotSchedule,
  EtcdSnapshotScheduleStatus,
  EtcdSnapshotStatus,
} from '../api/v1alpha1/index.ts';
import { apiVersion } from '../api/v1alpha1/index.ts';
import { ConditionReason, ConditionType } from '../api/conditions.ts';
import {
  EventRecorder,
  patchClusterStatus,
  type EventInput,
  patchMemberStatus,
  patchScheduleStatus,
  patchSnapshotStatus,
  type KubeClients,
  type KubeContext,
} from '../effects/kubernetes/index.ts';
import { controllerUid } from '../effects/kubernetes/meta.ts';
import { EffectError, type ClusterRef, type EffectContext } from '../effects/types.ts';
import { stateName, type ObjectRef } from '../journal/index.ts';
import { ERR } from '../machines/error-codes.ts';
import { clusterMachine, describeCluster, describeMember, memberMachine, TAG, troubled } from '../machines/index.ts';
import { describeSnapshot } from '../machines/describe-snapshot.ts';
import { snapshotMachine } from '../machines/snapshot.ts';
import { describeSchedule } from '../machines/describe-snapshot-schedule.ts';
import { snapshotScheduleMachine } from '../machines/snapshot-schedule.ts';
import { scheduleStatus } from './schedule-status.ts';
import { memberStatus } from './member-status.ts';
import { snapshotStatus } from './snapshot-status.ts';
import type { JournalKeeper } from './journal-keeper.ts';
import type { ManagerMetrics } from './metrics.ts';
import { journalObservedStep, newerSource, observedMachine, readObserved } from './resume.ts';
import { Runner, type Handlers, type PublishedStep, type RunnerStep } from './runner.ts';
import { clusterStatus, topState } from './status.ts';

/** A running machine and what the manager keeps beside it. */
export interface Entry<C extends EffectContext, M extends AnyStateMachine = AnyStateMachine> {
  readonly kind: ObjectRef['kind'];
  readonly key: string;
  readonly ref: ObjectRef;
  /** The EtcdCluster the object belongs to (itself, for a cluster). */
  readonly cluster: ClusterRef;
  readonly runner: Runner<C, M>;
  /** The journal the runner was made on (JournalKeeper.generation). */
  readonly generation: number;
  /** The journal failed under the runner: it may be ahead of the journal, and is made again from it. */
  journalFailed: boolean;
  /** Sequence number of the last journaled step. */
  seq: number;
  /** The last journaled step as status.observed carries it; undefined until one is published. */
  observed: Required<ObservedMachine> | undefined;
  resumed: boolean;
  /** The object as last seen by the informer. */
  object: EtcdCluster | EtcdMember | EtcdSnapshot | EtcdSnapshotSchedule;
  /** The status this manager last wrote: newer than the informer's copy until the watch catches up. */
  written: EtcdClusterStatus | EtcdMemberStatus | EtcdSnapshotStatus | EtcdSnapshotScheduleStatus | undefined;
}

/** An EtcdCluster's entry: its runner's snapshot is the cluster machine's. */
export interface ClusterEntry<C extends EffectContext> extends Entry<C, typeof clusterMachine> {
  readonly kind: 'EtcdCluster';
  object: EtcdCluster;
}

/** An EtcdMember's entry: its runner's snapshot is the member machine's. */
export interface MemberEntry<C extends EffectContext> extends Entry<C, typeof memberMachine> {
  readonly kind: 'EtcdMember';
  object: EtcdMember;
}

/** An EtcdSnapshot's entry: its runner's snapshot is the snapshot machine's. */
export interface SnapshotEntry<C extends EffectContext> extends Entry<C, typeof snapshotMachine> {
  readonly kind: 'EtcdSnapshot';
  object: EtcdSnapshot;
}

/** An EtcdSnapshotSchedule's entry: its runner's snapshot is the schedule machine's. */
export interface ScheduleEntry<C extends EffectContext> extends Entry<C, typeof snapshotScheduleMachine> {
  readonly kind: 'EtcdSnapshotSchedule';
  object: EtcdSnapshotSchedule;
}

/** A cluster's, a member's, a snapshot's or a schedule's entry, told apart by `kind`. */
export type AnyEntry<C extends EffectContext> = ClusterEntry<C> | MemberEntry<C> | SnapshotEntry<C> | ScheduleEntry<C>;

const MACHINE_NAME = {
  EtcdCluster: 'cluster',
  EtcdMember: 'member',
  EtcdSnapshot: 'snapshot',
  EtcdSnapshotSchedule: 'schedule',
} as const;

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

  /** The cluster's runner, created and resumed on first use. */
  async cluster(key: string, object: EtcdCluster): Promise<ClusterEntry<C>> {
    const ref: ObjectRef = {
      uid: object.metadata.uid ?? '',
      kind: 'EtcdCluster',
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
    };
    const cluster: ClusterRef = { namespace: ref.namespace, name: ref.name, uid: ref.uid };
    // Fixed at creation, so the input of a new machine says it once for the machine's life.
    const input = { cluster: { ...cluster, ...(object.spec.tls?.peer ? { peerTLS: true } : {}) } };
    const entry = await this.#entry(key, object, ref, cluster, clusterMachine, input);
    if (entry.kind !== 'EtcdCluster') throw new Error(`${key} runs a ${entry.kind}'s machine`);
    return entry;
  }

  /** The member's runner, created and resumed on first use; its cluster tells whether peer URLs are https. */
  async member(key: string, object: EtcdMember, owner?: EtcdCluster): Promise<MemberEntry<C>> {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const ref: ObjectRef = {
      uid: object.metadata.uid ?? '',
      kind: 'EtcdMember',
      namespace,
      name,
      cluster: object.spec.cluster,
    };
    const cluster: ClusterRef = { namespace, name: object.spec.cluster, uid: controllerUid(object.metadata) ?? '' };
    const input = {
      member: {
        namespace,
        name,
        uid: ref.uid,
        cluster: object.spec.cluster,
        ...(owner?.spec.tls?.peer ? { peerTLS: true } : {}),
      },
      bootstrap: object.spec.bootstrap,
      medium: object.spec.storage.medium ?? '',
    };
    const entry = await this.#entry(key, object, ref, cluster, memberMachine, input);
    if (entry.kind !== 'EtcdMember') throw new Error(`${key} runs a ${entry.kind}'s machine`);
    return entry;
  }

  /** The snapshot's runner, created and resumed on first use. */
  async snapshot(key: string, object: EtcdSnapshot): Promise<SnapshotEntry<C>> {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const clusterName = object.spec.clusterRef.name;
    const ref: ObjectRef = {
      uid: object.metadata.uid ?? '',
      kind: 'EtcdSnapshot',
      namespace,
      name,
      cluster: clusterName,
    };
    // Its handlers act on the EtcdSnapshot and its Jobs, never on the cluster: no cluster uid to check.
    const cluster: ClusterRef = { namespace, name: clusterName, uid: '' };
    const input = { snapshot: { namespace, name, uid: ref.uid, cluster: clusterName } };
    const entry = await this.#entry(key, object, ref, cluster, snapshotMachine, input);
    if (entry.kind !== 'EtcdSnapshot') throw new Error(`${key} runs a ${entry.kind}'s machine`);
    return entry;
  }

  /** The schedule's runner, created and resumed on first use. */
  async schedule(key: string, object: EtcdSnapshotSchedule): Promise<ScheduleEntry<C>> {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const clusterName = object.spec.clusterRef.name;
    const ref: ObjectRef = {
      uid: object.metadata.uid ?? '',
      kind: 'EtcdSnapshotSchedule',
      namespace,
      name,
      cluster: clusterName,
    };
    // Its handlers act on the schedule's EtcdSnapshots, never on the cluster: no cluster uid to check.
    const cluster: ClusterRef = { namespace, name: clusterName, uid: '' };
    const input = { schedule: { namespace, name, uid: ref.uid, cluster: clusterName } };
    const entry = await this.#entry(key, object, ref, cluster, snapshotScheduleMachine, input);
    if (entry.kind !== 'EtcdSnapshotSchedule') throw new Error(`${key} runs a ${entry.kind}'s machine`);
    return entry;
  }

  /** Writes the cluster's status again from its machine when it differs (a deadline passed, a write failed). */
  refreshClusterStatus(entry: ClusterEntry<C>, object: EtcdCluster): Promise<void> {
    const path = stateName(entry.runner.snapshot.value);
    return this.#writeClusterStatus(entry, object, path, path);
  }

  /** Writes the member's status again from its machine when it differs. */
  refreshMemberStatus(entry: MemberEntry<C>, object: EtcdMember): Promise<void> {
    return this.#writeMemberStatus(entry, object, stateName(entry.runner.snapshot.value));
  }

  /** Writes the snapshot's status again from its machine when it differs. */
  refreshSnapshotStatus(entry: SnapshotEntry<C>, object: EtcdSnapshot): Promise<void> {
    return this.#writeSnapshotStatus(entry, object, stateName(entry.runner.snapshot.value));
  }

  /** Writes the schedule's status again from its machine when it differs (a fire time passed). */
  refreshScheduleStatus(entry: ScheduleEntry<C>, object: EtcdSnapshotSchedule): Promise<void> {
    return this.#writeScheduleStatus(entry, object, stateName(entry.runner.snapshot.value));
  }

  async #entry(
    key: string,
    object: EtcdCluster | EtcdMember | EtcdSnapshot | EtcdSnapshotSchedule,
    ref: ObjectRef,
    cluster: ClusterRef,
    machine: AnyStateMachine,
    input: unknown,
  ): Promise<AnyEntry<C>> {
    let entry = this.#entries.get(key);
    if (entry && entry.ref.uid !== ref.uid) entry = undefined; // deleted and created again: a new object
    const { journal, generation } = this.#o.journal;
    const readopted = entry !== undefined && entry.generation !== generation;
    let resumedAt: number | undefined;
    if (!entry || readopted || entry.journalFailed) {
      const o = this.#o;
      resumedAt = this.#fromStatus(ref, machine, entry?.written ?? object.status);
      // The machine is the one for ref.kind (cluster() and member() pass them together).
      const made = {
        kind: ref.kind,
        key,
        ref,
        cluster,
        object,
        generation,
        journalFailed: false,
        written: entry?.written,
        observed: undefined,
        seq: journal.snapshot(ref.uid)?.seq ?? 0,
        resumed: false,
        runner: new Runner<C>({
          journal,
          ref,
          machineName: MACHINE_NAME[ref.kind],
          machine,
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
            o.metrics.intents.inc({ kind: r.type, result: r.recovered ? 'recovered' : r.ok ? 'succeeded' : 'failed' });
            o.metrics.intentSeconds.observe(r.ms / 1000, { kind: r.type });
          },
        }),
      } as AnyEntry<C>;
      entry = made;
      this.#entries.set(key, entry);
    }
    entry.object = object;
    if (readopted) await this.#journalReplaced(entry, resumedAt);
    if (!entry.resumed) {
      await entry.runner.resume();
      entry.resumed = true;
    }
    return entry;
  }

  /**
   * Journals the step status.observed carries when it is later than the journal's (the journal was
   * lost or damaged), so the runner resumes from it; returns its sequence, undefined when the journal wins.
   */
  #fromStatus(ref: ObjectRef, machine: AnyStateMachine, status: { observed?: ObservedMachine } | undefined) {
    const { journal } = this.#o.journal;
    const point = readObserved(status?.observed);
    if (!point || newerSource(journal.snapshot(ref.uid)?.seq, point) !== 'status') return undefined;
    journalObservedStep(journal, ref, MACHINE_NAME[ref.kind], machine, point, this.#o.now());
    this.#o.log.info(
      {
        machine: MACHINE_NAME[ref.kind],
        object: `${ref.namespace}/${ref.name}`,
        seq: point.seq,
        state: stateName(point.value),
        intents: point.intents.map((i) => i.type),
      },
      'resumed from status.observed: the journal does not have this step',
    );
    return point.seq;
  }

  /** Tells, on the object, that its journal was damaged, and where its machine goes on from. */
  async #journalReplaced(entry: AnyEntry<C>, resumedAt: number | undefined): Promise<void> {
    const movedTo = this.#o.journal.replaced?.movedTo ?? 'aside';
    const from =
      resumedAt === undefined
        ? `this ${entry.ref.kind} is adopted from what it shows`
        : `this ${entry.ref.kind} resumes from step ${resumedAt} of its status.observed`;
    await this.#record(entry, {
      type: 'Warning',
      reason: ConditionReason.JournalReplaced,
      note: `the journal was damaged and kept as ${movedTo}; a new one was started, and ${from}`,
      action: 'ReplaceJournal',
    });
  }

  /**
   * Writes the step into status.observed (with the rest of the status) before its intents run; a
   * write that fails throws when the step has intents, so none runs before the status carries it.
   */
  async #publish(entry: AnyEntry<C>, step: PublishedStep): Promise<void> {
    entry.seq = step.seq;
    entry.observed = observedMachine(step.seq, step.snapshot, step.intents);
    const from = stateName(step.from as never);
    const to = stateName(step.snapshot.value as never);
    const strict = step.intents.length > 0;
    if (entry.kind === 'EtcdCluster') await this.#writeClusterStatus(entry, entry.object, from, to, strict);
    else if (entry.kind === 'EtcdMember') await this.#writeMemberStatus(entry, entry.object, to, strict);
    else if (entry.kind === 'EtcdSnapshot') await this.#writeSnapshotStatus(entry, entry.object, to, strict);
    else await this.#writeScheduleStatus(entry, entry.object, to, strict);
  }

  async #onStep(entry: AnyEntry<C>, step: RunnerStep): Promise<void> {
    const o = this.#o;
    const from = stateName(step.from as never);
    const to = stateName(step.snapshot.value as never);
    const machine = MACHINE_NAME[entry.ref.kind];
    o.metrics.steps.inc({ machine, to: topState(to) });
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

  async #writeClusterStatus(
    entry: ClusterEntry<C>,
    object: EtcdCluster,
    from: string,
    to: string,
    strict = false,
  ): Promise<void> {
    const current = entry.written ?? object.status;
    const context = entry.runner.snapshot.context;
    const built = clusterStatus(
      current,
      { seq: entry.seq, from, to, context, generation: object.metadata.generation ?? 0 },
      this.#o.now(),
    );
    const status = entry.observed ? { ...built, observed: { ...built.observed, ...entry.observed } } : built;
    await this.#write(entry, status, strict, () => patchClusterStatus(this.#o.context(entry.cluster), status, current));
  }

  async #writeMemberStatus(entry: MemberEntry<C>, object: EtcdMember, path: string, strict = false): Promise<void> {
    const current = (entry.written as EtcdMemberStatus | undefined) ?? object.status;
    const built = memberStatus(
      current,
      { path, context: entry.runner.snapshot.context, generation: object.metadata.generation ?? 0 },
      this.#o.now(),
    );
    const status = entry.observed ? { ...built, observed: entry.observed } : built;
    await this.#write(entry, status, strict, () =>
      patchMemberStatus(this.#o.context(entry.cluster), entry.ref.name, status, current),
    );
    // One Warning when its Pod or claim gets stuck, or stuck for another reason: the why, at once.
    const stuck = newlyStuck(current?.conditions, status.conditions);
    if (stuck)
      await this.#record(entry, { type: 'Warning', reason: stuck.reason, note: stuck.message, action: 'Observe' });
  }

  async #writeSnapshotStatus(
    entry: SnapshotEntry<C>,
    object: EtcdSnapshot,
    path: string,
    strict = false,
  ): Promise<void> {
    const current = entry.written ?? object.status;
    const built = snapshotStatus(
      current,
      { path, context: entry.runner.snapshot.context, generation: object.metadata.generation ?? 0 },
      this.#o.now(),
    );
    const status = entry.observed ? { ...built, observed: entry.observed } : built;
    await this.#write(entry, status, strict, () =>
      patchSnapshotStatus(this.#o.context(entry.cluster), entry.ref.name, status, current),
    );
  }

  async #writeScheduleStatus(
    entry: ScheduleEntry<C>,
    object: EtcdSnapshotSchedule,
    path: string,
    strict = false,
  ): Promise<void> {
    const current = entry.written ?? object.status;
    const built = scheduleStatus(
      current,
      { path, context: entry.runner.snapshot.context, generation: object.metadata.generation ?? 0 },
      this.#o.now(),
    );
    const status = entry.observed ? { ...built, observed: entry.observed } : built;
    await this.#write(entry, status, strict, () =>
      patchScheduleStatus(this.#o.context(entry.cluster), entry.ref.name, status, current),
    );
  }

  /** Writes a status; a failure is logged, and thrown too when `strict` (a step's intents wait for it). */
  async #write(
    entry: Entry<C>,
    status: EtcdClusterStatus | EtcdMemberStatus | EtcdSnapshotStatus | EtcdSnapshotScheduleStatus,
    strict: boolean,
    patch: () => Promise<unknown>,
  ): Promise<void> {
    try {
      await patch();
      entry.written = status;
    } catch (err) {
      // The informer's copy is the base again, so the next refresh writes every difference.
      entry.written = undefined;
      // An object that went (its finalizer released) has no status to write.
      if (err instanceof EffectError && err.code === ERR.PATCH_STATUS_GONE) return;
      if (strict) throw err;
      this.#o.log.warn(
        { object: `${entry.ref.namespace}/${entry.ref.name}`, err: err instanceof Error ? err.message : String(err) },
        'status not written; the next refresh writes it',
      );
    }
  }

  async #event(entry: AnyEntry<C>, to: string, intents: RunnerStep['intents']): Promise<void> {
    const { snapshot } = entry.runner;
    const described =
      entry.kind === 'EtcdCluster'
        ? describeCluster(to, entry.runner.snapshot.context)
        : entry.kind === 'EtcdMember'
          ? describeMember(to, entry.runner.snapshot.context)
          : entry.kind === 'EtcdSnapshot'
            ? describeSnapshot(to, entry.runner.snapshot.context)
            : describeSchedule(to, entry.runner.snapshot.context);
    const warning = snapshot.hasTag(TAG.warning) || troubled(snapshot.context);
    await this.#record(entry, {
      type: warning ? 'Warning' : 'Normal',
      reason: described.step,
      note: described.message,
      action:
        intents.length > 0 ? intents.map((i) => i.type.charAt(0).toUpperCase() + i.type.slice(1)).join(',') : 'Observe',
    });
  }

  /** Records an Event about the entry's object; one that cannot be written is logged, never thrown. */
  async #record(entry: AnyEntry<C>, event: Omit<EventInput, 'regarding'>): Promise<void> {
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

/** The Stuck condition when it just turned True or changed its reason; undefined otherwise. */
export function newlyStuck(
  before: readonly Condition[] | undefined,
  after: readonly Condition[] | undefined,
): Condition | undefined {
  const was = before?.find((c) => c.type === ConditionType.Stuck);
  const now = after?.find((c) => c.type === ConditionType.Stuck);
  if (now?.status !== 'True') return undefined;
  return was?.status === 'True' && was.reason === now.reason ? undefined : now;
}
