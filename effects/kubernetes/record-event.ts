/**
 * Events about the operator's objects: what `kubectl describe` lists. They are core/v1 Events
 * with the fields kubectl sorts and counts by (lastTimestamp, count), which events.k8s.io/v1
 * refuses to set; docs/manager.md says how kubectl orders them and why names sort by time.
 */
import type { CoreV1Event } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node';
import { k8sTime } from '../../api/conditions.ts';
import { ERR } from '../../machines/error-codes.ts';
import { apiError, callOptions, isNotFound } from './_util.ts';
import type { KubeContext } from './context.ts';

/** The object an Event is about. */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
}

/** What happened. */
export interface EventInput {
  readonly regarding: EventSubject;
  readonly type: 'Normal' | 'Warning';
  /** CamelCase, from api/conditions.ts or a machine step. */
  readonly reason: string;
  /** Human-readable; cut at 1 kB as the API requires. */
  readonly note: string;
  /** What the operator did or failed to do, e.g. CreatePod. */
  readonly action: string;
}

/** The Event's name and how many times it has been seen. */
export interface RecordedEvent {
  readonly name: string;
  readonly count: number;
}

/** reportingComponent (and the From column of `kubectl describe`) of every Event the operator writes. */
export const REPORTING_CONTROLLER = 'etcd-operator.dev/manager';

/** A MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits. */
export const microTime = (at: Date): string => at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The last Event written about one object. */
interface LastEvent {
  readonly same: string;
  readonly name: string;
  readonly count: number;
}

/** What makes two Events about one object the same Event. */
const sameKey = (e: EventInput): string => `${e.type}\0${e.reason}\0${e.note}`;

/**
 * Writes Events. An Event equal to the last one about the same object (type, reason, note) is
 * counted on that one; any other is a new Event, so an object's Events, in name order, are in
 * the order they were last seen: the only order kubectl has within a second.
 */
export class EventRecorder {
  readonly #last = new Map<string, LastEvent>();
  readonly #objects: number;
  #stamp = 0n;

  /** Remembers the last Event of at most `objects` objects; a forgotten one's next Event is a new one. */
  constructor(objects = 10_000) {
    this.#objects = objects;
  }

  /** Records the Event, or counts one more of the last one about the same object. */
  async record(ctx: KubeContext, e: EventInput, now: Date = new Date()): Promise<RecordedEvent> {
    const uid = e.regarding.uid;
    const last = this.#last.get(uid);
    const same = sameKey(e);
    let recorded = last?.same === same ? await this.#count(ctx, e, last, now) : undefined;
    recorded ??= await this.#create(ctx, e, now);
    // Set anew, so the map's first key is the object written about longest ago: the one to forget.
    this.#last.delete(uid);
    this.#last.set(uid, { same, ...recorded });
    if (this.#last.size > this.#objects) this.#last.delete(this.#last.keys().next().value ?? '');
    return recorded;
  }

  /** A name after every name this recorder gave: the object's, then the time in ns as 16 hex digits. */
  #name(e: EventInput, now: Date): string {
    const ns = BigInt(now.getTime()) * 1_000_000n;
    this.#stamp = ns > this.#stamp ? ns : this.#stamp + 1n;
    return `${e.regarding.name}.${this.#stamp.toString(16).padStart(16, '0')}`;
  }

  async #create(ctx: KubeContext, e: EventInput, now: Date): Promise<RecordedEvent> {
    const namespace = e.regarding.namespace;
    const name = this.#name(e, now);
    // The client sends a Date with milliseconds; MicroTime wants six digits, Time none.
    const time = (s: string): Date => s as unknown as Date;
    const body: CoreV1Event = {
      metadata: { name, namespace },
      involvedObject: { ...e.regarding },
      type: e.type,
      reason: e.reason,
      message: Buffer.from(e.note).subarray(0, 1024).toString(),
      action: e.action,
      eventTime: time(microTime(now)),
      firstTimestamp: time(k8sTime(now)),
      lastTimestamp: time(k8sTime(now)),
      count: 1,
      reportingComponent: REPORTING_CONTROLLER,
      reportingInstance: ctx.instance ?? 'etcd-operator',
    };
    try {
      await ctx.kube.core.createNamespacedEvent({ namespace, body }, callOptions(ctx.signal));
      return { name, count: 1 };
    } catch (err) {
      throw apiError(
        ERR.RECORD_EVENT,
        `recording Event ${e.reason} about ${e.regarding.kind} ${e.regarding.name}`,
        err,
      );
    }
  }

  /** Counts one more on the last Event; undefined when it is gone (Events expire after an hour). */
  async #count(ctx: KubeContext, e: EventInput, last: LastEvent, now: Date): Promise<RecordedEvent | undefined> {
    const count = last.count + 1;
    const body = {
      count,
      lastTimestamp: k8sTime(now),
      series: { count, lastObservedTime: microTime(now) },
    };
    try {
      await ctx.kube.core.patchNamespacedEvent(
        { name: last.name, namespace: e.regarding.namespace, body },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
      return { name: last.name, count };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw apiError(ERR.RECORD_EVENT, `counting Event ${e.reason} about ${e.regarding.kind} ${e.regarding.name}`, err);
    }
  }
}
