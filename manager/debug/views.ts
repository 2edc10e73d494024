/**
 * What the debug page shows of an object, as the JSON it is sent: its line in the index, its
 * overlay, a page of its timeline and the live updates; and how a journal overview becomes a line.
 */
import { redactText, type ObjectKind, type ObjectOverview, type TimelineRow } from '../../journal/index.ts';
import { describeState, isMachineName, type Overlay } from '../../statechart/index.ts';
import { memberTrouble, type MemberContext } from '../../machines/member-decide.ts';
import type { MemberObservation } from '../../machines/types.ts';

/** One line of the index: an object and where its machine stands. */
export interface ObjectLine {
  readonly uid: string;
  readonly kind: ObjectKind;
  readonly namespace: string;
  readonly name: string;
  /** The EtcdCluster a member, snapshot or schedule belongs to. */
  readonly cluster: string | null;
  readonly machine: string;
  /** The machine's state (dotted path) and what `kubectl describe` says about it. */
  readonly state: string;
  readonly step: string;
  readonly message: string;
  readonly seq: number;
  /** When, and at which step, it entered its state; null when no kept step moved it. */
  readonly since: string | null;
  readonly sinceSeq: number | null;
  readonly lastError: ObjectOverview['lastError'];
  /** What keeps a member's Pod or claim from running (a cluster: its first such member), in Kubernetes' words. */
  readonly stuck: string | null;
  readonly openIntents: number;
  /** Whether the manager runs its machine now; null when the page was not told (a journal alone). */
  readonly running: boolean | null;
}

/** The journal's overlay as JSON: what the page colours on the chart. */
export type OverlayView = Omit<Overlay, 'edges' | 'stays'> & {
  readonly edges: Readonly<Record<string, { count: number; order: readonly number[] }>>;
  readonly stays: Readonly<Record<string, number>>;
};

/** An object's page: its line, and its overlay (null, with why, when its state is not in the chart). */
export interface ObjectView extends ObjectLine {
  readonly overlay: OverlayView | null;
  readonly overlayError: string | null;
}

/** Whole steps of a timeline, oldest first; `older` is the `before` of the next older page, null at the start. */
export interface TimelinePage {
  readonly rows: readonly TimelineRow[];
  readonly older: number | null;
}

/** What a live connection hears. `view` comes to those who asked for that object. */
export type LiveUpdate =
  | {
      readonly kind: 'object';
      readonly lsn: number;
      readonly line: ObjectLine;
      readonly rows: readonly TimelineRow[];
      readonly view?: ObjectView;
    }
  | { readonly kind: 'gone'; readonly uid: string }
  | { readonly kind: 'reset' };

/** What describe says for the object's state with the context the journal kept. */
export function describe(o: ObjectOverview): { step: string; message: string } {
  if (!isMachineName(o.machine)) return { step: o.stage, message: '' };
  const context = (o.state as { context?: unknown } | null | undefined)?.context;
  try {
    const d = describeState(o.machine, o.stage, context);
    return { step: d.step, message: redactText(d.message) };
  } catch {
    // A context from an older machine may lack what describe reads: the state's name still tells.
    return { step: o.stage, message: '' };
  }
}

/** A member's trouble, or a cluster's first stuck member's, from the context the journal kept. */
export function stuckOf(o: ObjectOverview): string | null {
  const context = (o.state as { context?: unknown } | null | undefined)?.context as Record<string, unknown> | undefined;
  if (!context) return null;
  if (o.machine === 'member') {
    const t = memberTrouble(context as unknown as MemberContext);
    return t ? redactText(t.message) : null;
  }
  if (o.machine !== 'cluster' || !Array.isArray(context.members)) return null;
  const m = (context.members as MemberObservation[]).find((x) => x.trouble && !x.deleting);
  return m?.trouble ? redactText(`EtcdMember ${m.name}: ${m.trouble.message}`) : null;
}

/** An object's line in the index; `running` is the set of uids the manager runs, if it said. */
export function lineOf(o: ObjectOverview, running: ReadonlySet<string> | undefined): ObjectLine {
  const { step, message } = describe(o);
  return {
    uid: o.ref.uid,
    kind: o.ref.kind,
    namespace: o.ref.namespace,
    name: o.ref.name,
    cluster: o.ref.cluster ?? (o.ref.kind === 'EtcdCluster' ? o.ref.name : null),
    machine: o.machine,
    state: o.stage,
    step,
    message,
    seq: o.seq,
    since: o.entered?.at ?? null,
    sinceSeq: o.entered?.seq ?? null,
    lastError: o.lastError && { ...o.lastError, message: redactText(o.lastError.message) },
    stuck: stuckOf(o),
    openIntents: o.openIntents,
    running: running === undefined ? null : running.has(o.ref.uid),
  };
}
