/**
 * One Runner per EtcdCluster and EtcdMember, created on first sight and resumed from the
 * journal (open intents recovered first), and what each journaled step tells the world: the
 * object's status, an Event when the state changed, a log line and the metrics. A status or
 * Event that cannot be written is logged and written again by the next refresh; it never
 * stops a step, whose truth is in the journal.
 */
import type { Logger } from 'pino';
import type { EtcdCluster, EtcdClusterStatus, EtcdMember, EtcdMemberStatus } from '../api/v1alpha1/index.ts';
import { apiVersion } from '../api/v1alpha1/index.ts';
import {
  patchClusterStatus,
  patchMemberStatus,
  recordEvent,
  type KubeClients,
  type KubeContext,
} from '../effects/kubernetes/index.ts';
import { controllerUid } from '../effects/kubernetes/meta.ts';
import type { ClusterRef, EffectContext } from '../effects/types.ts';
import { stateName, type Journal, type ObjectRef } from '../journal/index.ts';
import {
  clusterMachine,
  describeCluster,
  describeMember,
  memberMachine,
  type ClusterContext,
  type MemberContext,
} from '../machines/index.ts';
import { memberStatus } from './member-status.ts';
import type { ManagerMetrics } from './metrics.ts';
import { Runner, type Handlers, type RunnerStep } from './runner.ts';
import { clusterStatus, topState } from './status.ts';

/** A running machine and what the manager keeps beside it. */
export interface Entry<C extends EffectContext> {
  readonly key: string;
  readonly ref: ObjectRef;
  /** The EtcdCluster the object belongs to (itself, for a cluster). */
  readonly cluster: ClusterRef;
  readonly runner: Runner<C>;
  /** Sequence number of the last journaled step. */
  seq: number;
  resumed: boolean;
  /** The object as last seen by the informer. */
  object: EtcdCluster | EtcdMember;
  /** The status this manager last wrote: newer than the informer's copy until the watch catches up. */
  written: EtcdClusterStatus | EtcdMemberStatus | undefined;
}

/** What ObjectRunners needs. */
export interface ObjectRunnersOptions<C extends EffectContext> {
  readonly journal: Journal;
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
  readonly #entries = new Map<string, Entry<C>>();

  constructor(options: ObjectRunnersOptions<C>) {
    this.#o = options;
  }

  /** How many machines run. */
  get size(): number {
    return this.#entries.size;
  }

  /** Forgets the runner of an object that is gone (its journal stays); returns the object's uid. */
  drop(key: string): string | undefined {
    const uid = this.#entries.get(key)?.ref.uid;
    this.#entries.delete(key);
    return uid;
  }

  /** The cluster's runner, created and resumed on first use. */
  cluster(key: string, object: EtcdCluster): Promise<Entry<C>> {
    const ref: ObjectRef = {
      uid: object.metadata.uid ?? '',
      kind: 'EtcdCluster',
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
    };
    const cluster: ClusterRef = { namespace: ref.namespace, name: ref.name, uid: ref.uid };
    return this.#entry(key, object, ref, cluster, () => ({ machine: clusterMachine, input: { cluster } }));
  }

  /** The member's runner, created and resumed on first use. */
  member(key: string, object: EtcdMember): Promise<Entry<C>> {
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
      member: { namespace, name, uid: ref.uid, cluster: object.spec.cluster },
      bootstrap: object.spec.bootstrap,
      medium: object.spec.storage.medium ?? '',
    };
    return this.#entry(key, object, ref, cluster, () => ({ machine: memberMachine, input }));
  }

  /** Writes the cluster's status again from its machine when it differs (a deadline passed, a write failed). */
  refreshClusterStatus(entry: Entry<C>, object: EtcdCluster): Promise<void> {
    const path = stateName(entry.runner.snapshot.value as never);
    return this.#writeClusterStatus(entry, object, path, path);
  }

  /** Writes the member's status again from its machine when it differs. */
  refreshMemberStatus(entry: Entry<C>, object: EtcdMember): Promise<void> {
    return this.#writeMemberStatus(entry, object, stateName(entry.runner.snapshot.value as never));
  }

  async #entry(
    key: string,
    object: EtcdCluster | EtcdMember,
    ref: ObjectRef,
    cluster: ClusterRef,
    machine: () => { machine: typeof clusterMachine | typeof memberMachine; input: unknown },
  ): Promise<Entry<C>> {
    let entry = this.#entries.get(key);
    if (entry && entry.ref.uid !== ref.uid) entry = undefined; // deleted and created again: a new object
    if (!entry) {
      const { machine: m, input } = machine();
      const o = this.#o;
      const made: Entry<C> = {
        key,
        ref,
        cluster,
        object,
        written: undefined,
        seq: o.journal.snapshot(ref.uid)?.seq ?? 0,
        resumed: false,
        runner: new Runner<C>({
          journal: o.journal,
          ref,
          machineName: ref.kind === 'EtcdCluster' ? 'cluster' : 'member',
          machine: m,
          input,
          handlers: o.handlers,
          context: () => o.context(cluster),
          now: o.now,
          onStep: (step) => this.#onStep(made, step),
          onOutcome: (r) => {
            o.metrics.intents.inc({ kind: r.type, result: r.recovered ? 'recovered' : r.ok ? 'succeeded' : 'failed' });
            o.metrics.intentSeconds.observe(r.ms / 1000, { kind: r.type });
          },
        }),
      };
      entry = made;
      this.#entries.set(key, entry);
    }
    entry.object = object;
    if (!entry.resumed) {
      await entry.runner.resume();
      entry.resumed = true;
    }
    return entry;
  }

  async #onStep(entry: Entry<C>, step: RunnerStep): Promise<void> {
    const o = this.#o;
    entry.seq = step.seq;
    const from = stateName(step.from as never);
    const to = stateName(step.snapshot.value as never);
    const machine = entry.ref.kind === 'EtcdCluster' ? 'cluster' : 'member';
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
    if (entry.ref.kind === 'EtcdCluster') await this.#writeClusterStatus(entry, entry.object as EtcdCluster, from, to);
    else await this.#writeMemberStatus(entry, entry.object as EtcdMember, to);
    if (from !== to)
      await this.#event(entry, to, step.snapshot.context as ClusterContext | MemberContext, step.intents);
  }

  async #writeClusterStatus(entry: Entry<C>, object: EtcdCluster, from: string, to: string): Promise<void> {
    const current = entry.written ?? object.status;
    const context = entry.runner.snapshot.context as ClusterContext;
    const status = clusterStatus(
      current,
      { seq: entry.seq, from, to, context, generation: object.metadata.generation ?? 0 },
      this.#o.now(),
    );
    await this.#write(entry, status, () => patchClusterStatus(this.#o.context(entry.cluster), status, current));
  }

  async #writeMemberStatus(entry: Entry<C>, object: EtcdMember, path: string): Promise<void> {
    const current = entry.written ?? object.status;
    const status = memberStatus(
      current,
      { path, context: entry.runner.snapshot.context as MemberContext, generation: object.metadata.generation ?? 0 },
      this.#o.now(),
    );
    await this.#write(entry, status, () =>
      patchMemberStatus(this.#o.context(entry.cluster), entry.ref.name, status, current),
    );
  }

  async #write(
    entry: Entry<C>,
    status: EtcdClusterStatus | EtcdMemberStatus,
    patch: () => Promise<unknown>,
  ): Promise<void> {
    try {
      await patch();
      entry.written = status;
    } catch (err) {
      // The informer's copy is the base again, so the next refresh writes every difference.
      entry.written = undefined;
      // An object that went (its finalizer released) has no status to write.
      if ((err as { code?: string }).code === 'ERR_PATCH_STATUS_GONE') return;
      this.#o.log.warn(
        { object: `${entry.ref.namespace}/${entry.ref.name}`, err: err instanceof Error ? err.message : String(err) },
        'status not written; the next refresh writes it',
      );
    }
  }

  async #event(
    entry: Entry<C>,
    to: string,
    context: ClusterContext | MemberContext,
    intents: readonly { type: string }[],
  ): Promise<void> {
    const described =
      entry.ref.kind === 'EtcdCluster'
        ? describeCluster(to, context as ClusterContext)
        : describeMember(to, context as MemberContext);
    const warning = topState(to) === 'degraded' || topState(to) === 'replacing' || context.lastError !== null;
    try {
      await recordEvent(this.#o.context(entry.cluster), {
        regarding: {
          apiVersion,
          kind: entry.ref.kind,
          name: entry.ref.name,
          namespace: entry.ref.namespace,
          uid: entry.ref.uid,
        },
        type: warning ? 'Warning' : 'Normal',
        reason: described.step,
        note: described.message,
        action:
          intents.length > 0
            ? intents.map((i) => i.type.charAt(0).toUpperCase() + i.type.slice(1)).join(',')
            : 'Observe',
      });
    } catch (err) {
      this.#o.log.warn(
        { object: `${entry.ref.namespace}/${entry.ref.name}`, err: err instanceof Error ? err.message : String(err) },
        'Event not recorded',
      );
    }
  }
}
