/**
 * What a user reads about maintenance: a defragmentation run (which member, why, what it waits
 * for, what each member gave back), a recovery from NOSPACE, and what a steady cluster has due.
 */
import {
  allHealthy,
  defragDue,
  formatBytes,
  invalidSchedule,
  nextDefragTime,
  quotaSource,
  scheduleDue,
  SPACE_RECHECK_MS,
  type DefragRun,
  type DefragSummary,
  type MaintenanceView,
} from './rules.ts';
import { ConditionReason } from '../../../api/conditions.ts';
import type { ClusterContext } from '../../cluster-decide.ts';
import type { ConcernWords } from '../concern.ts';

/** A time as status and Events write it: RFC 3339 in UTC, whole seconds. */
const time = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Why a run runs, as a user reads it. */
function why(run: Pick<DefragRun, 'reason' | 'scheduledAt' | 'fragmented'>): string {
  if (run.reason === 'schedule') return `scheduled for ${time(run.scheduledAt ?? 0)}`;
  if (run.reason === 'nospace') return 'to recover from the NOSPACE alarm';
  const over = Object.entries(run.fragmented ?? {}).map(([m, mib]) => `${m} ${mib} MiB`);
  return over.length === 1
    ? `over the threshold with ${Object.values(run.fragmented ?? {})[0]} MiB fragmented`
    : `over the threshold (fragmented: ${over.join(', ')})`;
}

/** What the members done so far gave back: `; done: demo-1 freed 60 MiB, ...`. */
const doneSoFar = (run: DefragRun): string =>
  run.done.length === 0 ? '' : `; done: ${run.done.map((d) => `${d.member} freed ${formatBytes(d.freed)}`).join(', ')}`;

/** A step of a run: `defragmenting demo-1 (1 of 3), scheduled for ...: ...`. */
export function defragMessage(sub: string, c: MaintenanceView, withReason = true): string {
  const run = c.defrag;
  if (!run) return 'defragmenting';
  const current = run.member !== null && run.remaining.includes(run.member) ? 1 : 0;
  const position = run.total - run.remaining.length + current;
  const head = `defragmenting ${run.member ?? '?'} (${position} of ${run.total})${withReason ? `, ${why(run)}` : ''}`;
  let doing: string;
  if (sub.startsWith('movingLeader') || sub.startsWith('awaitingLeader') || sub.startsWith('choosing'))
    doing = 'moving leadership to another voter first, so writes do not stall while the leader is rebuilt';
  else if (sub.startsWith('running')) doing = 'its database is rebuilt; its reads and writes wait meanwhile';
  else if (sub.startsWith('awaitingMember')) doing = 'waiting for it to answer again';
  else doing = 'waiting until every voter is healthy and in sync: a member being rebuilt serves no reads or writes';
  return `${head}: ${doing}${doneSoFar(run)}`;
}

/** The alarm and its quota, as every NOSPACE message begins. */
const noSpace = (c: MaintenanceView): string =>
  `etcd raised its NOSPACE alarm: the database reached its quota of ${quotaSource(c)} and every write is refused`;

/** A step of the recovery from NOSPACE. */
export function spaceMessage(sub: string, c: MaintenanceView): string {
  if (sub.startsWith('compacting') || sub.startsWith('checking') || !c.space)
    return `${noSpace(c)}. Compacting the history to the current revision, as etcd's maintenance guide says`;
  const compacted = `compacted to revision ${c.space.revision ?? '?'}, ${formatBytes(c.space.inUse ?? 0)} in use`;
  const pass = c.space.passes > 1 ? ' (a second pass: a database was still over the limit after the first)' : '';
  if (sub.startsWith('disarming'))
    return `${noSpace(c)}; ${compacted}, and every member defragmented${pass}: disarming the alarm`;
  return `${noSpace(c)}; ${compacted}${pass}; ${defragMessage(sub.replace(/^defragmenting\.?/, ''), c, false)}`;
}

/** The SpaceAlarm condition (and Degraded's) while NOSPACE is raised: the quota, and what is done about it. */
export function spaceAlarmMessage(c: MaintenanceView): string {
  if (c.space?.outcome === 'notFreed') return outOfSpaceMessage(c);
  return `${noSpace(c)}; the operator compacts the history, defragments every member and disarms the alarm once the data fits`;
}

/** The SpaceAlarm condition once the alarm is gone. */
export function spaceDisarmedMessage(c: MaintenanceView): string {
  const s = c.space;
  if (s?.outcome !== 'disarmed') return 'no alarm raised';
  const members = c.lastDefrag?.reason === 'nospace' ? c.lastDefrag.done.length : 0;
  return `the NOSPACE alarm was disarmed at ${time(s.at)} after compacting to revision ${s.revision ?? '?'} and defragmenting ${members} member${members === 1 ? '' : 's'}: ${formatBytes(s.inUse ?? 0)} in use of the ${formatBytes(s.quota)} quota`;
}

/** Recovery could not free enough: what the user must do. */
export function outOfSpaceMessage(c: MaintenanceView): string {
  const again = time((c.space?.at ?? c.now) + SPACE_RECHECK_MS);
  return (
    `${noSpace(c)}; the operator cannot free enough: ${c.space?.why ?? 'the data fills the quota'}. ` +
    'Raise spec.options.quotaBackendBytes (a member runs with the new quota once its Pod is made again: delete the member Pods one at a time) ' +
    `or delete data (deletes are allowed while the alarm is raised); tried again at ${again} or when the quota changes`
  );
}

/** What a steady cluster has due or next, appended to its message; empty without maintenance. */
export function maintenanceNote(c: MaintenanceView): string {
  const invalid = invalidSchedule(c);
  if (invalid) return `; spec.maintenance.defrag.schedule cannot be read (${invalid}): no scheduled defragmentation`;
  const due = defragDue(c);
  if (due && !allHealthy(c)) {
    const what =
      due === 'schedule'
        ? `defragmentation due (scheduled for ${time(scheduleDue(c)?.run ?? 0)})`
        : `${Object.keys(c.fragmented ?? {}).length} over the defragmentation threshold`;
    return `; ${what}: it starts once every voter is healthy`;
  }
  const next = nextDefragTime(c);
  return next === null ? '' : `; next defragmentation at ${time(next)}`;
}

/** The Defragmented condition's message: what the last run gave back, member by member. */
export function defragSummary(s: DefragSummary): string {
  const total = s.done.reduce((sum, d) => sum + d.freed, 0);
  const n = s.done.length;
  const each = s.done.map((d) => `${d.member} ${formatBytes(d.freed)}`).join(', ');
  const whom = n === 1 ? '1 member' : `${n} members`;
  return n === 0
    ? `no member needed it (${why(s)}), at ${time(s.finishedAt)}`
    : `freed ${formatBytes(total)} on ${whom} (${each}), ${why(s)}, finished at ${time(s.finishedAt)}`;
}

/** The run finished in this step, not dropped for a spec edit (the summary is then an older run's). */
const finishedNow = (c: ClusterContext): boolean => !c.defrag && (c.lastDefrag?.finishedAt ?? -1) >= c.stepStartedAt;

/** Members the last run passed over that are still members. */
const passedOver = (c: ClusterContext): string[] =>
  (c.lastDefrag?.skipped ?? []).filter((name) => c.members.some((m) => m.name === name && !m.deleting));

/** Maintenance's words: its steps' messages, and Defragmented once a run finished. */
export const maintenanceWords: ConcernWords = {
  describe: {
    defragmenting: defragMessage,
    recoveringSpace: spaceMessage,
    outOfSpace: (_, c) => outOfSpaceMessage(c),
  },
  completes: {
    defragmenting: {
      condition: 'Defragmented',
      message: (c) => (c.lastDefrag ? defragSummary(c.lastDefrag) : 'no member needed it'),
      // Finished in this run on every member it took that is still here.
      done: (c) => finishedNow(c) && passedOver(c).length === 0,
      // A run that passed over a member says so; one dropped for a spec edit leaves the last run's word.
      unfinished: (c) =>
        finishedNow(c) && c.lastDefrag
          ? {
              reason: ConditionReason.Incomplete,
              message: `${defragSummary(c.lastDefrag)}; not defragmented: ${passedOver(c).join(', ')} (etcd did not list it at its turn)`,
            }
          : null,
    },
  },
};
