/**
 * Events (events.k8s.io/v1) about the operator's objects: what `kubectl describe` lists. The
 * same reason and note about the same object is one Event whose series count grows.
 */
import { createHash } from 'node:crypto';
import type { EventsV1Event } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { apiError, callOptions, isConflict } from './_util.ts';
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

/** reportingController of every Event the operator writes. */
export const REPORTING_CONTROLLER = 'etcd-operator.dev/manager';

/** A MicroTime as the API server parses it: RFC 3339 with exactly six fractional digits. */
export const microTime = (at: Date): string => at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The deterministic name of an Event, so a repeat finds the first one. */
export function eventName(e: EventInput): string {
  const hash = createHash('sha256')
    .update(`${e.regarding.uid}\0${e.type}\0${e.reason}\0${e.note}`)
    .digest('hex')
    .slice(0, 16);
  return `${e.regarding.name}.${hash}`;
}

/** Records the Event, or counts one more in the series of an equal one. */
export async function recordEvent(ctx: KubeContext, e: EventInput, now: Date = new Date()): Promise<RecordedEvent> {
  const namespace = e.regarding.namespace;
  const name = eventName(e);
  const body: EventsV1Event = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name, namespace },
    // The client would send a Date with milliseconds, which the API server refuses for a MicroTime.
    eventTime: microTime(now) as unknown as Date,
    regarding: { ...e.regarding },
    type: e.type,
    reason: e.reason,
    note: Buffer.from(e.note).subarray(0, 1024).toString(),
    action: e.action,
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: ctx.instance ?? 'etcd-operator',
  };
  try {
    await ctx.kube.events.createNamespacedEvent({ namespace, body }, callOptions(ctx.signal));
    return { name, count: 1 };
  } catch (err) {
    if (!isConflict(err))
      throw apiError(
        ERR.RECORD_EVENT,
        `recording Event ${e.reason} about ${e.regarding.kind} ${e.regarding.name}`,
        err,
      );
  }
  try {
    const existing = await ctx.kube.events.readNamespacedEvent({ name, namespace }, callOptions(ctx.signal));
    const count = (existing.series?.count ?? 1) + 1;
    const patch = { series: { count, lastObservedTime: microTime(now) } };
    await ctx.kube.events.patchNamespacedEvent(
      { name, namespace, body: patch },
      callOptions(ctx.signal, PatchStrategy.MergePatch),
    );
    return { name, count };
  } catch (err) {
    throw apiError(ERR.RECORD_EVENT, `counting Event ${e.reason} about ${e.regarding.kind} ${e.regarding.name}`, err);
  }
}
