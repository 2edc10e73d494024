/**
 * What the overlay needs from the journal, through its read API: the object, its steps
 * (event, from, to), its latest state and context, and whether an intent is open or failed.
 */
import type { Journal, OpenIntent, Snapshot, TimelineRow } from '../journal/index.ts';
import { describeState, isMachineName, type MachineName } from './machines.ts';
import type { JournalStep, OverlayInput } from './overlay.ts';

/** Thrown when the journal has no such object, or one no chart can be drawn for. */
export class StatechartNotFoundError extends Error {
  override readonly name = 'StatechartNotFoundError';
  readonly code = 'ERR_STATECHART_NOT_FOUND';
}

/** Which object to chart: a cluster, one of its members, or a member by its own name. */
export interface ObjectQuery {
  readonly name: string;
  readonly namespace: string;
  readonly member?: string;
  /** Number the last this many steps that moved. */
  readonly last?: number;
}

/** Finds the object in the journal and reads what its overlay shows. */
export function overlayInputFrom(journal: Journal, query: ObjectQuery): { machine: MachineName; input: OverlayInput } {
  const found = find(journal.objects(), query);
  const machine = found.machine;
  if (!isMachineName(machine)) {
    throw new StatechartNotFoundError(`${label(found)} ran machine '${machine}', which has no chart`);
  }
  const rows = journal.timeline({ uid: found.ref.uid });
  const context = (found.state as { context?: unknown } | null)?.context;
  return {
    machine,
    input: {
      object: label(found),
      steps: stepsOf(rows),
      stage: found.stage,
      now: describeState(machine, found.stage, context),
      lastSeq: found.seq,
      problem: problemOf(journal, found, rows),
      ...(query.last === undefined ? {} : { last: query.last }),
    },
  };
}

const label = (o: Snapshot): string => `${o.ref.kind} ${o.ref.namespace}/${o.ref.name}`;

function find(objects: readonly Snapshot[], q: ObjectQuery): Snapshot {
  const inNs = objects.filter((o) => o.ref.namespace === q.namespace);
  const cluster = inNs.find((o) => o.ref.kind === 'EtcdCluster' && o.ref.name === q.name);
  const members = inNs.filter((o) => o.ref.kind === 'EtcdMember');
  let found: Snapshot | undefined;
  if (q.member !== undefined) {
    const names = [q.member, `${q.name}-${q.member}`];
    found = members.find((o) => names.includes(o.ref.name) && (o.ref.cluster ?? q.name) === q.name);
  } else {
    found = cluster ?? members.find((o) => o.ref.name === q.name);
  }
  if (found) return found;
  const what = q.member === undefined ? `EtcdCluster or EtcdMember ${q.name}` : `member ${q.member} of ${q.name}`;
  const known = objects.map((o) => `${o.ref.kind} ${o.ref.namespace}/${o.ref.name}`);
  const has = known.length ? `it has: ${known.slice(0, 20).join(', ')}` : 'it is empty';
  throw new StatechartNotFoundError(`no ${what} in namespace ${q.namespace} in the journal (${has})`);
}

/** One entry per journaled step: its event and the transition's from and to. */
export function stepsOf(rows: readonly TimelineRow[]): JournalStep[] {
  const bySeq = new Map<number, { seq: number; event: string; from: string; to: string }>();
  for (const r of rows) {
    if (r.entry !== 'event' && r.entry !== 'transition') continue;
    const step = bySeq.get(r.seq) ?? { seq: r.seq, event: '', from: '', to: '' };
    if (r.entry === 'event') step.event = r.name;
    else Object.assign(step, { from: r.from ?? '', to: r.to ?? '' });
    bySeq.set(r.seq, step);
  }
  return [...bySeq.values()].filter((s) => s.from !== '' && s.to !== '').sort((a, b) => a.seq - b.seq);
}

/** An intent still without an outcome, or the last outcome when it failed. */
function problemOf(journal: Journal, o: Snapshot, rows: readonly TimelineRow[]): string | null {
  return problemText(journal.openIntents(o.ref.uid), rows.filter((r) => r.entry === 'outcome').at(-1));
}

/** In words: the intents still without an outcome, else the last outcome when it failed; null when neither. */
export function problemText(
  open: readonly Pick<OpenIntent, 'type' | 'seq'>[],
  last: Pick<TimelineRow, 'name' | 'seq' | 'ok' | 'code' | 'message'> | undefined,
): string | null {
  if (open.length > 0) {
    return `waiting on ${open.map((i) => `intent ${i.type} (asked at step #${i.seq})`).join(', ')}: no outcome yet`;
  }
  if (last && last.ok === false) {
    return `last outcome: ${last.name} (step #${last.seq}) failed: ${last.code ?? ''} ${last.message ?? ''}`.trim();
  }
  return null;
}
