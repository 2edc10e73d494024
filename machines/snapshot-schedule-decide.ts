/**
 * The schedule machine's context, guards, updates and its one decision. A run is an EtcdSnapshot
 * named after its fire time; the fire time is chosen in the step that asks for the snapshot, so
 * the journal holds it with the intent and a crash never runs one fire time twice or skips it.
 * Retention deletes one snapshot at a time, never one already asked to go.
 */
import { NO_STEP, stepUpdates, toAssigns, type StepBookkeeping, type Update } from './kit.ts';
import {
  checkTimeZone,
  due,
  parseCron,
  parseDuration,
  prune,
  type Cron,
  type Due,
  type OwnedSnapshot,
  type Prune,
} from './schedule/index.ts';
import type {
  CreateScheduledSnapshotParams,
  DeleteEtcdSnapshotParams,
  ObjectRef,
  ScheduleEvent,
  ScheduleSpecObservation,
} from './types.ts';

/** The run asked for and not answered yet. */
export interface ScheduledRun {
  readonly name: string;
  /** The fire time, epoch ms. */
  readonly scheduledAt: number;
  /** Its snapshot is verified by a restore: the Nth run since the last verified one. */
  readonly verify?: boolean;
}

/** Everything the schedule machine knows. Plain JSON: journaled with every step. */
export interface ScheduleContext extends StepBookkeeping {
  readonly schedule: ObjectRef & { readonly cluster: string };
  /** Null until observed. */
  readonly spec: ScheduleSpecObservation | null;
  readonly deleting: boolean;
  /** Why the spec cannot be acted on (schedule, timeZone, maxAge); null when it can. */
  readonly invalid: string | null;
  /** The schedule's EtcdSnapshots that are not being deleted; null until listed. */
  readonly snapshots: readonly OwnedSnapshot[] | null;
  readonly run: ScheduledRun | null;
  /** Fire times up to here were run or missed: only later ones are due. Null before the first. */
  readonly handledThrough: number | null;
  /** Fire time of the last run whose EtcdSnapshot was created. */
  readonly lastScheduleTime: number | null;
  readonly lastSnapshot: string | null;
  /** Runs whose EtcdSnapshot was created (spec.verify.every counts them); absent in older journals. */
  readonly runsCreated?: number;
  readonly missedRuns: number;
  /** The snapshot retention deletes now, chosen with the intent. */
  readonly pruning: Prune | null;
  /** Snapshots deleted and still listed as not deleting (the cache lags): never chosen twice. */
  readonly deleted: readonly string[];
  /** A step that failed for good, and the generation it failed at: the schedule rests until the next run or an edit. */
  readonly failure: { readonly message: string; readonly generation: number } | null;
}

/** What a schedule machine starts from. */
export interface ScheduleInput {
  readonly schedule: ObjectRef & { readonly cluster: string };
}

/** The context of a schedule not observed yet. */
export const initialScheduleContext = (i: ScheduleInput): ScheduleContext => ({
  schedule: i.schedule,
  spec: null,
  deleting: false,
  invalid: null,
  snapshots: null,
  run: null,
  handledThrough: null,
  lastScheduleTime: null,
  lastSnapshot: null,
  missedRuns: 0,
  pruning: null,
  deleted: [],
  failure: null,
  ...NO_STEP,
});

/** The EtcdSnapshot of the run at `fireMs`: the schedule's name and the fire time in minutes since 1970. */
export const scheduledSnapshotName = (schedule: string, fireMs: number): string =>
  `${schedule}-${Math.floor(fireMs / 60_000)}`;

/** Why the spec cannot be acted on, in the words of the parser that refused it; null when it can. */
export function invalidSpec(spec: ScheduleSpecObservation): string | null {
  try {
    parseCron(spec.schedule);
    if (spec.timeZone !== null) checkTimeZone(spec.timeZone);
    if (spec.maxAge !== null) parseDuration(spec.maxAge);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** The parsed schedule, or null when it is not valid. */
export function cronOf(c: ScheduleContext): Cron | null {
  if (!c.spec || c.invalid !== null) return null;
  return parseCron(c.spec.schedule);
}

/** Which run is due at the machine's `now`; null when the spec is not known or not valid. */
export function dueNow(c: ScheduleContext): Due | null {
  const cron = cronOf(c);
  if (!cron || !c.spec) return null;
  return due({
    cron,
    timeZone: c.spec.timeZone ?? 'UTC',
    lastScheduleTime: c.handledThrough,
    creationTime: c.spec.createdAt,
    startingDeadlineSeconds: c.spec.startingDeadlineSeconds,
    now: c.now,
  });
}

/** The schedule's snapshot still Pending or Running, if any (Forbid: the next run waits for it). */
export const activeSnapshot = (c: ScheduleContext): OwnedSnapshot | undefined =>
  c.snapshots?.find((s) => s.phase === 'Pending' || s.phase === 'Running');

/** The snapshot retention deletes next, oldest first; never one already asked to go. */
export function nextPrune(c: ScheduleContext): Prune | null {
  if (!c.spec || c.invalid !== null || !c.snapshots) return null;
  const live = c.snapshots.filter((s) => !c.deleted.includes(s.name));
  const policy = {
    keepLast: c.spec.keepLast,
    maxAgeMs: c.spec.maxAge === null ? null : parseDuration(c.spec.maxAge),
    failedHistoryLimit: c.spec.failedHistoryLimit,
  };
  return prune(live, policy, c.now)[0] ?? null;
}

/** When the schedule fires next; null while it cannot (suspended, invalid, being deleted) or never does again. */
export function nextScheduleTime(c: ScheduleContext): number | null {
  if (c.deleting || c.spec?.suspend) return null;
  return dueNow(c)?.next ?? null;
}

type Ctx = { context: ScheduleContext };

/** Guards by name. */
export const guards = {
  observed: ({ context: c }: Ctx) => c.spec !== null && c.snapshots !== null,
  runChosen: ({ context: c }: Ctx) => c.run !== null,
};

/** The steps `decideSchedule` can choose. */
export const SCHEDULE_DECISIONS = [
  'ending',
  'creating',
  'invalid',
  'suspended',
  'late',
  'failed',
  'pruning',
  'busy',
  'idle',
] as const;
/** One of SCHEDULE_DECISIONS. */
export type ScheduleDecision = (typeof SCHEDULE_DECISIONS)[number];

/** Which step comes next for this schedule. */
export function decideSchedule(c: ScheduleContext): ScheduleDecision {
  if (c.deleting) return 'ending';
  // A run asked for is finished first: its snapshot may exist already, and its outcome is recorded.
  if (c.run) return 'creating';
  if (!c.spec || c.invalid !== null) return 'invalid';
  if (c.spec.suspend) return 'suspended';
  const d = dueNow(c);
  const busy = activeSnapshot(c) !== undefined;
  if (d?.run != null && !busy) return 'creating';
  if (d?.latest != null && d.run === null) return 'late';
  if (c.failure && c.failure.generation === c.spec.generation) return 'failed';
  if (nextPrune(c)) return 'pruning';
  if (d?.run != null) return 'busy';
  return 'idle';
}

type Of<T extends ScheduleEvent['type']> = Extract<ScheduleEvent, { type: T }>;

/** Context updates by name; each also moves `now` to the event's time (kit.ts). */
const updates = {
  observeSchedule: (_, e) => {
    const { spec, deleting } = e as Of<'k8s.schedule.updated'>;
    return { spec, deleting, invalid: invalidSpec(spec) };
  },
  // A deleted snapshot stays expected to go until the list shows it gone (or being deleted).
  observeSnapshots: (c, e) => {
    const { snapshots } = e as Of<'k8s.snapshots.listed'>;
    return { snapshots, deleted: c.deleted.filter((n) => snapshots.some((s) => s.name === n)) };
  },
  observeTime: () => ({}),
  ...stepUpdates,
  // Chosen with the intent, in the same journaled step: a crash after the create knows which fire time it was for.
  chooseRun: (c) => {
    const d = dueNow(c);
    if (d?.run == null) return {};
    const every = c.spec?.verifyEvery ?? null;
    const verify = every !== null && (c.runsCreated ?? 0) % every === 0;
    const run = { name: scheduledSnapshotName(c.schedule.name, d.run), scheduledAt: d.run, verify };
    return { run, handledThrough: d.run, missedRuns: c.missedRuns + d.missed };
  },
  recordCreated: (c) => ({
    lastScheduleTime: c.run?.scheduledAt ?? c.lastScheduleTime,
    lastSnapshot: c.run?.name ?? c.lastSnapshot,
    runsCreated: (c.runsCreated ?? 0) + (c.run ? 1 : 0),
    run: null,
    failure: null,
  }),
  // Every fire time up to the latest passed its starting deadline: counted, never run.
  recordMissed: (c) => {
    const d = dueNow(c);
    if (d?.latest == null) return {};
    return { handledThrough: d.latest, missedRuns: c.missedRuns + d.missed };
  },
  choosePrune: (c) => ({ pruning: nextPrune(c) }),
  recordDeleted: (c) => ({ deleted: c.pruning ? [...c.deleted, c.pruning.name] : c.deleted, pruning: null }),
  // A failure retrying cannot fix (kit.attempt): that run is lost; the next one tries again.
  markFailed: (c) => ({
    failure: {
      message: `${c.run ? `creating EtcdSnapshot ${c.run.name}` : `deleting EtcdSnapshot ${c.pruning?.name ?? ''}`} failed: ${c.lastError?.code ?? 'ERR'}: ${c.lastError?.message ?? 'failed'}`,
      generation: c.spec?.generation ?? 0,
    },
    run: null,
    pruning: null,
    retryAt: null,
  }),
} satisfies Record<string, Update<ScheduleContext, ScheduleEvent>>;

/** The updates as xstate assign actions, by name. */
export const assigns = toAssigns<ScheduleContext, ScheduleEvent, typeof updates>(updates);

const ref = (c: ScheduleContext, name: string) => ({ schedule: c.schedule.name, scheduleUid: c.schedule.uid, name });

/** Parameters of the intents, from the context. */
export const params = {
  create: ({ context: c }: Ctx): CreateScheduledSnapshotParams => ({
    ...ref(c, c.run?.name ?? ''),
    scheduledAt: new Date(c.run?.scheduledAt ?? 0).toISOString(),
    verify: c.run?.verify ?? false,
  }),
  delete: ({ context: c }: Ctx): DeleteEtcdSnapshotParams => ({
    ...ref(c, c.pruning?.name ?? ''),
    reason: c.pruning?.reason ?? 'keepLast',
  }),
};
