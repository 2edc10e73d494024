/**
 * Resuming without the journal: the object's annotation `etcd-operator.dev/resume` carries the
 * machine's state, context and the intents of the last journaled step (written before any of
 * them runs); status.observed carries only its sequence and state, so `kubectl describe` stays
 * readable (it shortens an annotation to one line). A status written by an older manager carries
 * the whole step in status.observed, and is read too. On start, whichever of the journal and the
 * object holds the later step wins; when it is the object, its step is written into the journal
 * as the object's latest, so the runner resumes from it exactly as after a crash: every intent of
 * that step open, each asked to its handler's recover before it is run.
 */
import type { AnyMachineSnapshot, AnyStateMachine, StateValue } from 'xstate';
import type { ObservedIntent, ObservedMachine } from '../api/v1alpha1/index.ts';
import { exactJson, stateName, type Journal, type MachineName, type ObjectRef } from '../journal/index.ts';

/** A journaled step as status.observed carries it, read back. */
export interface ResumePoint {
  readonly seq: number;
  readonly value: StateValue;
  readonly context: Readonly<Record<string, unknown>>;
  readonly intents: readonly { readonly type: string; readonly params: Readonly<Record<string, unknown>> }[];
}

/** The event a step resumed from status.observed is journaled with (the machine is not fed it). */
export const RESUMED_EVENT = 'status.observed.resumed';

/** The bounds the CRD sets on the resume fields (api/v1alpha1/common.ts). */
export const OBSERVED_LIMITS = { context: 262_144, intents: 32, params: 8192 } as const;

/**
 * The resume fields of status.observed for a journaled step: its sequence, state, context and
 * intents. A step too large for the CRD's bounds is carried without them (state empty): the
 * status is still written, and a manager without its journal adopts the object instead.
 */
export function observedMachine(
  seq: number,
  snapshot: Pick<AnyMachineSnapshot, 'value' | 'context'>,
  intents: readonly { readonly type: string; readonly params?: unknown }[],
): Required<ObservedMachine> {
  const what = `status.observed of step ${seq}`;
  const context = exactJson(snapshot.context, `${what}: context`) ?? '{}';
  const observed = intents.map((i): ObservedIntent => ({
    type: i.type,
    params: exactJson(i.params ?? {}, `${what}: ${i.type}`) ?? '{}',
  }));
  const fits =
    context.length <= OBSERVED_LIMITS.context &&
    observed.length <= OBSERVED_LIMITS.intents &&
    observed.every((i) => i.params.length <= OBSERVED_LIMITS.params);
  if (!fits) return { sequence: seq, state: '', context: '', intents: [] };
  return { sequence: seq, state: stateName(snapshot.value as StateValue), context, intents: observed };
}

/** The annotation that carries an object's resume point. */
export const RESUME_ANNOTATION = 'etcd-operator.dev/resume';

/** The most an annotation's value may hold: the API server bounds all of an object's annotations at 256 KiB. */
export const RESUME_ANNOTATION_LIMIT = 240_000;

/**
 * The value of RESUME_ANNOTATION for a step: one line of JSON, its sequence and state first (what
 * describe's one shortened line shows), then its intents and context. Null when the step carries
 * no resume fields (too large): the annotation is removed, and a manager without its journal
 * adopts the object instead.
 */
export function resumeAnnotation(point: Required<ObservedMachine>): string | null {
  if (!point.state) return null;
  const intents = point.intents.map((i) => `{"type":${JSON.stringify(i.type)},"params":${i.params}}`).join(',');
  const value = `{"sequence":${point.sequence},"state":${JSON.stringify(point.state)},"intents":[${intents}],"context":${point.context}}`;
  return value.length <= RESUME_ANNOTATION_LIMIT ? value : null;
}

/** status.observed's share of a step: its sequence and state; the rest is in RESUME_ANNOTATION. */
export const briefObserved = (point: Required<ObservedMachine>): ObservedMachine => ({
  sequence: point.sequence,
  state: point.state,
});

/** The step RESUME_ANNOTATION carries, or undefined when there is none or it cannot be read. */
export function readAnnotation(value: string | undefined): ResumePoint | undefined {
  if (!value) return undefined;
  try {
    const point = JSON.parse(value) as { sequence?: unknown; state?: unknown; context?: unknown; intents?: unknown };
    const { sequence, state, context, intents } = point;
    if (typeof sequence !== 'number' || typeof state !== 'string' || state === '') return;
    if (typeof context !== 'object' || context === null || Array.isArray(context) || !Array.isArray(intents)) return;
    return {
      seq: sequence,
      value: stateValue(state),
      context: context as never,
      intents: (intents as { type: string; params?: Record<string, unknown> }[]).map((i) => ({
        type: i.type,
        params: i.params ?? {},
      })),
    };
  } catch {
    return undefined;
  }
}

/** The later step of the annotation's and status.observed's (an older manager wrote the whole step there). */
export function readResume(
  annotation: string | undefined,
  observed: ObservedMachine | undefined,
): ResumePoint | undefined {
  const [a, o] = [readAnnotation(annotation), readObserved(observed)];
  if (!a || !o) return a ?? o;
  return o.seq > a.seq ? o : a;
}

/** The dotted path back to a state value: `a.b.c` -> `{ a: { b: 'c' } }` (no machine here has parallel states). */
export function stateValue(path: string): StateValue {
  const [head = '', ...rest] = path.split('.');
  return rest.length === 0 ? head : { [head]: stateValue(rest.join('.')) };
}

/** The step status.observed carries in the older form (state, context and intents), or undefined when it carries none or it cannot be read. */
export function readObserved(observed: ObservedMachine | undefined): ResumePoint | undefined {
  if (!observed || observed.sequence === undefined || !observed.state || observed.context === undefined) return;
  try {
    const context = JSON.parse(observed.context) as unknown;
    if (typeof context !== 'object' || context === null || Array.isArray(context)) return;
    const intents = (observed.intents ?? []).map((i) => ({
      type: i.type,
      params: JSON.parse(i.params) as Record<string, unknown>,
    }));
    return { seq: observed.sequence, value: stateValue(observed.state), context: context as never, intents };
  } catch {
    return undefined;
  }
}

/**
 * Which source holds the later step of the object: the journal unless status.observed carries a
 * higher sequence (the journal was lost, damaged or is an older copy). Equal sequences are the
 * same step, and the journal knows more of it (which intents were answered).
 */
export function newerSource(journalSeq: number | undefined, point: ResumePoint | undefined): 'journal' | 'status' {
  if (!point) return 'journal';
  return point.seq > (journalSeq ?? 0) ? 'status' : 'journal';
}

/**
 * Writes the step of status.observed into the journal as the object's latest step, its intents
 * open. Intents an older journal still has open are closed as superseded first: the status's step
 * came after them, and running them now would repeat or undo what followed.
 */
export function journalObservedStep(
  journal: Journal,
  ref: ObjectRef,
  machineName: MachineName,
  machine: AnyStateMachine,
  point: ResumePoint,
  at: number,
): void {
  for (const open of journal.openIntents(ref.uid))
    journal.recordOutcome(ref, open.id, {
      ok: false,
      code: 'ERR_SUPERSEDED',
      message: `superseded by step ${point.seq} of status.observed`,
      at,
    });
  const snapshot = machine.resolveState({ value: point.value, context: point.context });
  journal.recordStep(ref, {
    machine: machineName,
    seq: point.seq,
    event: { type: RESUMED_EVENT, at, sequence: point.seq },
    from: snapshot.value as never,
    to: snapshot.value as never,
    state: machine.getPersistedSnapshot(snapshot),
    intents: point.intents.map((i) => ({ type: i.type, params: i.params })),
  });
}
