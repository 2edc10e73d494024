/**
 * The maintenance steps of the cluster machine by name: guards, context updates and the
 * parameters of their intents (what they decide by is in cluster-maintenance.ts).
 */
import {
  defragDue,
  allHealthy,
  formatBytes,
  idOf,
  newRun,
  nextMember,
  quotaOf,
  spaceLimit,
  SPACE_LIMIT_SHARE,
  type DefragRun,
  type DefragSummary,
  type MaintenanceContext,
  type MaintenanceView,
} from './rules.ts';
import { failureOf } from '../../kit.ts';
import { leadsWithSuccessor, successor } from '../../policy.ts';
import type { CompactParams, DefragmentParams, DisarmAlarmParams, MoveLeaderParams } from '../../intents.ts';
import type { MemberObservation } from '../../types.ts';

type Ctx = { context: MaintenanceView };
type Event = { readonly type: string; readonly at: number };

/** The member whose turn it is, as the machine last listed it; undefined once it is gone. */
const defragee = (c: MaintenanceView): MemberObservation | undefined =>
  c.members.find((m) => m.name === c.defrag?.member && !m.deleting);

const etcdFresh = (c: MaintenanceView): boolean => !c.etcdStale && c.etcd !== null;

/** Guards of the maintenance steps, by name. */
export const maintenanceGuards = {
  defragRunDone: ({ context: c }: Ctx) => (c.defrag?.remaining.length ?? 0) === 0,
  defrageeGone: ({ context: c }: Ctx) =>
    defragee(c) === undefined || !c.etcd?.members.some((m) => m.id === c.defrag?.memberID),
  readyToDefrag: ({ context: c }: Ctx) => allHealthy(c),
  defrageeLeads: ({ context: c }: Ctx) => leadsWithSuccessor(c.etcd, c.defrag?.memberID),
  defrageeLedOff: ({ context: c }: Ctx) =>
    etcdFresh(c) && c.etcd?.leader != null && c.etcd.leader !== c.defrag?.memberID,
  defrageeAnswers: ({ context: c }: Ctx) =>
    etcdFresh(c) && c.etcd !== null && c.etcd.healthy.includes(c.defrag?.memberID ?? ''),
  spaceFreeable: ({ context: c }: Ctx) => c.space?.inUse != null && c.space.inUse <= spaceLimit(quotaOf(c)),
  // A database still over the limit after the first pass may have been rebuilt before its own
  // compaction finished: one more pass over every member, then the verdict.
  spaceNotFreedFirstPass: ({ context: c, event }: Ctx & { event: object }) =>
    failureOf(event)?.code === 'ERR_SPACE_NOT_FREED' && (c.space?.passes ?? 1) < 2,
  spaceNotFreed: ({ event }: { event: object }) => failureOf(event)?.code === 'ERR_SPACE_NOT_FREED',
};

type Update = (
  c: MaintenanceView,
  e: Event,
) => Partial<MaintenanceContext> & { etcdStale?: boolean; retryAt?: null; attempts?: number; lastError?: null };

/** A failure that ends in another step than a retry: nothing is left to back off from. */
const noRetry = { retryAt: null, attempts: 0, lastError: null } as const;

/** Context updates of the maintenance steps, by name. */
export const maintenanceUpdates = {
  // A run already in flight goes on (after an interruption, with the members it has left).
  beginDefrag: (c) => {
    if (c.defrag) return {};
    const reason = defragDue(c) ?? 'threshold';
    const run = newRun(c, reason);
    // The fire time is handled in the step that takes it: journaled, it never runs twice.
    const schedule = c.defragSchedule;
    const fired = reason === 'schedule' && schedule && run.scheduledAt !== null;
    return {
      defrag: run,
      ...(fired ? { defragSchedule: { ...schedule, handledThrough: run.scheduledAt } } : {}),
    };
  },
  chooseDefragee: (c) => {
    const run = c.defrag;
    const member = run && nextMember(c, run);
    return run && member ? { defrag: { ...run, member, memberID: idOf(c, member) ?? '' } } : {};
  },
  skipDefragee: (c) => {
    const run = c.defrag;
    if (!run) return {};
    const skipped = run.member !== null ? [...(run.skipped ?? []), run.member] : run.skipped;
    return {
      defrag: { ...run, remaining: run.remaining.filter((m) => m !== run.member), ...(skipped ? { skipped } : {}) },
    };
  },
  recordDefragmented: (c, e) => {
    const run = c.defrag;
    if (!run?.member) return {};
    const freed =
      'result' in e && typeof (e.result as { freed?: unknown })?.freed === 'number'
        ? (e.result as { freed: number }).freed
        : 0;
    return {
      defrag: {
        ...run,
        remaining: run.remaining.filter((m) => m !== run.member),
        done: [...run.done, { member: run.member, freed }],
      },
    };
  },
  // A threshold run takes in a member found over the threshold since it began (a follower's
  // sizes show a compaction only after its next commit), so one run covers them all. Asked on
  // the fresh probe after each member, before the next turn is chosen.
  admitOverThreshold: (c) => {
    const run = c.defrag;
    if (run?.reason !== 'threshold') return {};
    const joined = c.members
      .filter((m) => !m.deleting && !m.dormant)
      .map((m) => m.name)
      .filter((m) => !run.remaining.includes(m) && !run.done.some((d) => d.member === m) && m !== run.member)
      .filter((m) => c.fragmented?.[idOf(c, m) ?? ''] !== undefined);
    if (joined.length === 0) return {};
    return {
      defrag: {
        ...run,
        remaining: [...run.remaining, ...joined],
        total: run.total + joined.length,
        fragmented: {
          ...run.fragmented,
          ...Object.fromEntries(joined.map((m) => [m, c.fragmented?.[idOf(c, m) ?? ''] ?? 0])),
        },
      },
    };
  },
  finishDefrag: (c) => ({
    defrag: null,
    lastDefrag: c.defrag ? summary(c.defrag, c.now) : (c.lastDefrag ?? null),
    etcdStale: true,
  }),
  // The user changed the spec while the run waited for health: theirs comes first; this run is dropped.
  abandonDefrag: () => ({ defrag: null }),
  beginSpaceRecovery: (c) => ({
    space:
      c.space?.outcome === 'recovering'
        ? c.space
        : { quota: quotaOf(c), outcome: 'recovering', at: c.now, passes: 1, revision: null, inUse: null },
    // A scheduled or threshold run in flight is superseded: the recovery takes every member.
    ...(c.defrag && c.defrag.reason !== 'nospace' ? { defrag: null } : {}),
  }),
  recordCompaction: (c, e) => {
    const r = ('result' in e ? e.result : undefined) as { revision?: number; dbSizeInUse?: number } | undefined;
    return c.space ? { space: { ...c.space, revision: r?.revision ?? null, inUse: r?.dbSizeInUse ?? null } } : {};
  },
  beginSpaceDefrag: (c) => (c.defrag?.reason === 'nospace' ? {} : { defrag: newRun(c, 'nospace') }),
  beginSecondPass: (c) => ({
    ...noRetry,
    defrag: newRun(c, 'nospace'),
    ...(c.space ? { space: { ...c.space, passes: c.space.passes + 1 } } : {}),
  }),
  markSpaceNotFreed: (c, e) => {
    const error = failureOf(e);
    const why =
      error?.message ??
      `after compacting to revision ${c.space?.revision ?? '?'}, ${formatBytes(c.space?.inUse ?? 0)} of data is in use, more than the ${formatBytes(spaceLimit(quotaOf(c)))} (${SPACE_LIMIT_SHARE * 100}% of the quota) it must be under`;
    return {
      ...noRetry,
      space: {
        ...(c.space ?? { quota: quotaOf(c), passes: 1, revision: null, inUse: null }),
        outcome: 'notFreed',
        at: c.now,
        why,
      },
      defrag: null,
    };
  },
  finishSpaceRecovery: (c) => ({
    space: c.space ? { ...c.space, outcome: 'disarmed', at: c.now } : null,
    lastDefrag: c.defrag ? summary(c.defrag, c.now) : (c.lastDefrag ?? null),
    defrag: null,
    etcdStale: true,
  }),
} satisfies Record<string, Update>;

const summary = (run: DefragRun, now: number): DefragSummary => ({
  reason: run.reason,
  scheduledAt: run.scheduledAt,
  done: run.done,
  ...(run.skipped?.length ? { skipped: run.skipped } : {}),
  finishedAt: now,
  ...(run.fragmented ? { fragmented: run.fragmented } : {}),
});

/** defragment for the member whose turn it is. */
export const defragmentParams = ({ context: c }: Ctx): DefragmentParams => ({
  member: c.defrag?.member ?? '',
  memberID: c.defrag?.memberID ?? '',
});

/** moveLeader off the member whose turn it is, to a healthy voter: one already done when there is one. */
export function defragMoveLeaderParams({ context: c }: Ctx): MoveLeaderParams {
  const run = c.defrag;
  const doneIDs = new Set((run?.done ?? []).map((d) => idOf(c, d.member)));
  const to = successor(c.etcd, run?.memberID ?? '', (m) => doneIDs.has(m.id));
  return { member: run?.member ?? '', memberID: run?.memberID ?? '', toID: to?.id ?? '' };
}

/** compact, for NOSPACE. */
export const compactParams = (): CompactParams => ({ reason: 'NOSPACE' });

/** disarmAlarm at the quota the members run with. */
export const disarmParams = ({ context: c }: Ctx): DisarmAlarmParams => ({
  quotaBytes: quotaOf(c),
  limitBytes: spaceLimit(quotaOf(c)),
});
