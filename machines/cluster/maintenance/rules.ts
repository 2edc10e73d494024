/**
 * What the cluster machine knows and decides about maintenance: defragmentation on a schedule or
 * past a threshold, and recovery from etcd's NOSPACE alarm (compact, defragment every member,
 * disarm). Invariants: one member at a time, followers first, the leader last with leadership
 * moved off it first; a run starts only with every voter healthy; a fire time runs at most once;
 * NOSPACE is disarmed only once every database is well under the quota, and a recovery that
 * cannot free enough says so and waits instead of looping. Pure: time is the events' `at`.
 */
import { checkTimeZone, due, parseCron, type Due } from '../../schedule/index.ts';
import { etcdMemberFor, voters } from '../../policy.ts';
import type { DefragSpec, EtcdObservation, MaintenanceSpec, MemberObservation, ObjectRef } from '../../types.ts';

const MiB = 2 ** 20;
/** etcd's backend quota when --quota-backend-bytes is not set (2 GiB). */
export const ETCD_DEFAULT_QUOTA = 2 * 2 ** 30;
/** NOSPACE is disarmed only with every database at most this share of the quota: room for the next writes. */
export const SPACE_LIMIT_SHARE = 0.8;
/** Fragmentation under this never counts: rebuilding a database to win less blocks a member for nothing. */
export const MIN_FRAGMENTED_BYTES = MiB;
/** A run for the threshold starts no sooner than this after the last run ended, so constant churn cannot loop it. */
export const THRESHOLD_COOLDOWN_MS = 5 * 60_000;
/** After a recovery that could not free enough, the next try (a compaction, and more only if it helps) waits this long. */
export const SPACE_RECHECK_MS = 10 * 60_000;

/** Why a defragmentation run runs. */
export type DefragReason = 'schedule' | 'threshold' | 'nospace';

/** A run of defragmentation, one member at a time. */
export interface DefragRun {
  readonly reason: DefragReason;
  /** The fire time a scheduled run is for. */
  readonly scheduledAt: number | null;
  /** Members still to defragment, by name; each turn takes a follower before the leader. */
  readonly remaining: readonly string[];
  /** Members done, in order, with the bytes each gave back. */
  readonly done: readonly { readonly member: string; readonly freed: number }[];
  /** Members passed over, by name: gone, or not listed by etcd, at their turn. Absent: none. */
  readonly skipped?: readonly string[];
  /** The member whose turn it is (or was, until the next is chosen), and its etcd ID. */
  readonly member: string | null;
  readonly memberID: string;
  readonly total: number;
  /** For a run for the threshold: the fragmentation that started it, MiB by member name. */
  readonly fragmented?: Readonly<Record<string, number>>;
}

/** The last run that finished, for the Defragmented condition. */
export interface DefragSummary {
  readonly reason: DefragReason;
  readonly scheduledAt: number | null;
  readonly done: DefragRun['done'];
  readonly skipped?: DefragRun['skipped'];
  readonly finishedAt: number;
  readonly fragmented?: Readonly<Record<string, number>>;
}

/** Where a recovery from NOSPACE stands. */
export interface SpaceRecovery {
  /** The quota it is judged against. */
  readonly quota: number;
  readonly outcome: 'recovering' | 'notFreed' | 'disarmed';
  /** When the outcome was reached (when the recovery began, while recovering). */
  readonly at: number;
  /** Passes over every member: a second one when a database was still over the limit after the first. */
  readonly passes: number;
  /** The revision the history was compacted to, and the space in use right after. */
  readonly revision: number | null;
  readonly inUse: number | null;
  /** Why it could not free enough. */
  readonly why?: string;
}

/** What the cluster context holds for maintenance; every field optional, so older journals read. */
export interface MaintenanceContext {
  readonly maintenance?: MaintenanceSpec;
  /** Members over the threshold: fragmented MiB (rounded) by etcd member ID; absent when none. */
  readonly fragmented?: Readonly<Record<string, number>>;
  /** The schedule as first seen, and the fire times handled up to: only later ones are due. */
  readonly defragSchedule?: { readonly source: string; readonly handledThrough: number } | null;
  readonly defrag?: DefragRun | null;
  readonly lastDefrag?: DefragSummary | null;
  readonly space?: SpaceRecovery | null;
}

/** What maintenance reads besides its own fields. */
export interface MaintenanceView extends MaintenanceContext {
  readonly cluster: ObjectRef;
  readonly members: readonly MemberObservation[];
  readonly etcd: EtcdObservation | null;
  readonly etcdStale: boolean;
  readonly etcdError: string | null;
  readonly now: number;
}

/** Bytes as a user reads them: `180 MiB`, `1.5 GiB`, `512 KiB`. */
export function formatBytes(bytes: number): string {
  const [unit, size] = bytes >= 2 ** 30 ? ['GiB', 2 ** 30] : bytes >= MiB ? ['MiB', MiB] : ['KiB', 1024];
  return `${Number((bytes / size).toFixed(1))} ${unit}`;
}

/** The quota the members run with, in bytes. */
export const quotaOf = (c: MaintenanceView): number => c.maintenance?.quotaBytes ?? ETCD_DEFAULT_QUOTA;

/** The most a database may hold for NOSPACE to be disarmed. */
export const spaceLimit = (quota: number): number => Math.floor(quota * SPACE_LIMIT_SHARE);

/** Where the quota comes from, as a user sets it. */
export const quotaSource = (c: MaintenanceView): string =>
  c.maintenance?.quotaBytes != null
    ? `${formatBytes(quotaOf(c))} (spec.options.quotaBackendBytes)`
    : `${formatBytes(ETCD_DEFAULT_QUOTA)} (etcd's default; spec.options.quotaBackendBytes is not set)`;

/** Members over the threshold, fragmented MiB by ID; undefined when none (so the context stays still at rest). */
export function overThreshold(
  sizes: EtcdObservation['sizes'],
  spec: DefragSpec | null | undefined,
): Record<string, number> | undefined {
  if (!sizes || !spec || (spec.fragmentedBytes === null && spec.fragmentedPercent === null)) return undefined;
  const over: Record<string, number> = {};
  for (const [id, s] of Object.entries(sizes)) {
    const fragmented = s.dbSize - s.dbSizeInUse;
    if (fragmented < MIN_FRAGMENTED_BYTES) continue;
    // Both, when both are set: a share alone fires on small databases, bytes alone on large ones.
    if (spec.fragmentedBytes !== null && fragmented < spec.fragmentedBytes) continue;
    if (spec.fragmentedPercent !== null && fragmented * 100 < spec.fragmentedPercent * s.dbSize) continue;
    over[id] = Math.round(fragmented / MiB);
  }
  return Object.keys(over).length > 0 ? over : undefined;
}

/** Why the schedule cannot be read (cron expression, time zone); null when it can or there is none. */
export function invalidSchedule(c: MaintenanceView): string | null {
  const spec = c.maintenance?.defrag;
  if (!spec?.schedule) return null;
  try {
    parseCron(spec.schedule);
    if (spec.timeZone !== null) checkTimeZone(spec.timeZone);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Which scheduled run is due at the machine's `now`; null without a valid schedule. */
export function scheduleDue(c: MaintenanceView): Due | null {
  const spec = c.maintenance?.defrag;
  if (!spec?.schedule || !c.defragSchedule || invalidSchedule(c) !== null) return null;
  const since = c.defragSchedule.handledThrough;
  return due({
    cron: parseCron(spec.schedule),
    timeZone: spec.timeZone ?? 'UTC',
    lastScheduleTime: since,
    creationTime: since,
    startingDeadlineSeconds: null,
    now: c.now,
  });
}

/** When the schedule fires next: the manager wakes the machine then. Null without one. */
export const nextDefragTime = (c: MaintenanceView): number | null => scheduleDue(c)?.next ?? null;

/** Whether a member over the threshold asks for a run now (not within the cool-down after the last). */
const thresholdDue = (c: MaintenanceView): boolean =>
  c.fragmented !== undefined && (!c.lastDefrag || c.now >= c.lastDefrag.finishedAt + THRESHOLD_COOLDOWN_MS);

/** The run due now, if any: a fire time passed, or a member is over the threshold. */
export function defragDue(c: MaintenanceView): DefragReason | null {
  if (scheduleDue(c)?.run != null) return 'schedule';
  return thresholdDue(c) ? 'threshold' : null;
}

/** Every voter healthy, none catching up, no learner, on a fresh probe: a member may be taken for a while. */
export function allHealthy(c: MaintenanceView): boolean {
  if (c.etcdStale || c.etcd === null || c.etcdError !== null) return false;
  const etcd = c.etcd;
  return (
    voters(c.cluster, c.members, etcd).every((v) => etcd.healthy.includes(v.id) && !etcd.behind?.includes(v.id)) &&
    !etcd.members.some((m) => m.learner)
  );
}

/** Whether etcd's NOSPACE alarm is raised. */
export const noSpaceRaised = (c: MaintenanceView): boolean =>
  c.etcd?.alarms?.some((a) => a.alarm === 'NOSPACE') ?? false;

/** The recovery step NOSPACE leads to, or null without the alarm. */
export function spaceDecision(c: MaintenanceView): 'recoveringSpace' | 'outOfSpace' | null {
  if (!noSpaceRaised(c)) return null;
  const s = c.space;
  const waiting = s?.outcome === 'notFreed' && s.quota === quotaOf(c) && c.now < s.at + SPACE_RECHECK_MS;
  return waiting ? 'outOfSpace' : 'recoveringSpace';
}

/** Whether a defragmentation run goes on or starts now: one in flight, or one due with every voter healthy. */
export const defragDecision = (c: MaintenanceView): boolean =>
  Boolean(c.defrag) || (defragDue(c) !== null && allHealthy(c));

/** The etcd ID of a member, if etcd lists it. */
export const idOf = (c: MaintenanceView, member: string): string | undefined =>
  etcdMemberFor(c.cluster, c.etcd, member)?.id;

/** Members a run takes: all that run for a schedule or NOSPACE, those over the threshold for it. */
function runMembers(c: MaintenanceView, reason: DefragReason): string[] {
  return c.members
    .filter((m) => !m.deleting && !m.dormant)
    .filter((m) => {
      const id = idOf(c, m.name);
      return id !== undefined && (reason !== 'threshold' || c.fragmented?.[id] !== undefined);
    })
    .map((m) => m.name);
}

/** A new run for `reason`. */
export function newRun(c: MaintenanceView, reason: DefragReason): DefragRun {
  const remaining = runMembers(c, reason);
  const fragmented =
    reason === 'threshold'
      ? Object.fromEntries(remaining.map((m) => [m, c.fragmented?.[idOf(c, m) ?? ''] ?? 0]))
      : undefined;
  return {
    reason,
    scheduledAt: reason === 'schedule' ? (scheduleDue(c)?.run ?? null) : null,
    remaining,
    done: [],
    member: null,
    memberID: '',
    total: remaining.length,
    ...(fragmented ? { fragmented } : {}),
  };
}

/** The member whose turn is next: followers by ordinal, the leader last (leadership moves once, at the end). */
export function nextMember(c: MaintenanceView, run: DefragRun): string | undefined {
  const leads = (name: string): boolean => c.etcd?.leader != null && idOf(c, name) === c.etcd.leader;
  const ordinal = (name: string): number => c.members.find((m) => m.name === name)?.ordinal ?? 0;
  return [...run.remaining].sort((a, b) => Number(leads(a)) - Number(leads(b)) || ordinal(a) - ordinal(b))[0];
}

/** The spec, the schedule's start and the fragmentation, as observed. */
export function observeMaintenance(
  c: MaintenanceView,
  spec: MaintenanceSpec | undefined,
  at: number,
): Partial<MaintenanceContext> {
  const maintenance = spec ?? { defrag: null, quotaBytes: null };
  const source = maintenance.defrag?.schedule ?? null;
  // A new or changed schedule counts from when it was seen: no fire time before it runs.
  const defragSchedule =
    source === null ? null : c.defragSchedule?.source === source ? c.defragSchedule : { source, handledThrough: at };
  return { maintenance, defragSchedule };
}
