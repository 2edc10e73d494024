/**
 * EtcdMember.status from the member machine: its state (what the cluster machine reads back),
 * the step as a Progressing condition, one condition per milestone (volume, joined, promoted),
 * and what etcd says about it. Pure: the caller gives the time and writes the result.
 */
import { ConditionReason, ConditionType, setConditions, type ConditionInput } from '../api/conditions.ts';
import type { Condition, EtcdMemberStatus } from '../api/v1alpha1/index.ts';
import { describeMember } from '../machines/describe.ts';
import { memberMachine } from '../machines/member.ts';
import { pathHasTag, TAG } from '../machines/tags.ts';
import { memberTrouble, type MemberContext } from '../machines/member-decide.ts';
import type { EtcdMemberInfo } from '../machines/types.ts';
import type { MemberState } from '../machines/member-state.ts';
import { pvcName } from '../effects/kubernetes/meta.ts';

/** Reasons every start meets for a moment (scheduling, a claim binding): stuck only past STUCK_AFTER_MS. */
const PASSING = new Set(['Unschedulable', 'SchedulerError', 'ClaimPending']);
/** How long a passing reason may last before the member is Stuck. */
export const STUCK_AFTER_MS = 30_000;

/**
 * From when the member's trouble makes it Stuck: at once for a reason that does not pass by
 * itself, STUCK_AFTER_MS after it began for a passing one; null with no trouble (or a passing one
 * whose start is unknown).
 */
function stuckFrom(c: MemberContext): number | null {
  const found = memberTrouble(c);
  if (!found) return null;
  if (!PASSING.has(found.reason)) return -Infinity;
  return c.troubleSince == null ? null : c.troubleSince.at + STUCK_AFTER_MS;
}

/**
 * When the Stuck condition may next change with time alone: a passing reason (waiting to be
 * scheduled, or for a claim to bind) reaching STUCK_AFTER_MS. The member is worked then: nothing
 * else may come to wake it (the scheduler retries an unschedulable Pod without changing its
 * status), and it would say "starting" for good. Null when nothing is due.
 */
export function stuckDueAt(c: MemberContext, now: number): number | null {
  const from = stuckFrom(c);
  return from !== null && from > now ? from : null;
}

/** What one step (or a refresh) of the member machine gives the status. */
export interface MemberStep {
  readonly path: string;
  readonly context: MemberContext;
  readonly generation: number;
}

/** The status to write, given the status the EtcdMember has now. */
export function memberStatus(previous: EtcdMemberStatus | undefined, step: MemberStep, now: number): EtcdMemberStatus {
  const c = step.context;
  const { state: described, step: name, message } = describeMember(step.path, c);
  const state = shown(described, step.path);
  const info: EtcdMemberInfo | null | undefined = c.etcd;
  const resting = pathHasTag(memberMachine, step.path, TAG.resting);
  const set: ConditionInput[] = [
    { type: ConditionType.Progressing, status: resting ? 'False' : 'True', reason: name, message },
    c.medium === 'Memory'
      ? {
          type: ConditionType.VolumeReady,
          status: 'True',
          reason: ConditionReason.NoVolumeNeeded,
          message: "storage.medium Memory: the data lives in the Pod's memory",
        }
      : c.pvcBound
        ? {
            type: ConditionType.VolumeReady,
            status: 'True',
            reason: ConditionReason.Completed,
            message: `PersistentVolumeClaim ${pvcName(c.member.name)} is bound`,
          }
        : {
            type: ConditionType.VolumeReady,
            status: 'False',
            reason: name,
            message: `PersistentVolumeClaim ${pvcName(c.member.name)} is ${c.pvcBound === false ? 'not bound yet' : 'missing'}`,
          },
  ];
  // Shown from the first time something kept its Pod or claim from running on. Waiting to be
  // scheduled or for a claim to bind is part of every start: stuck only once it lasts.
  const from = stuckFrom(c);
  const trouble = from !== null && now >= from ? memberTrouble(c) : undefined;
  if (trouble || previous?.conditions?.some((x) => x.type === ConditionType.Stuck))
    set.push(
      trouble
        ? { type: ConditionType.Stuck, status: 'True', reason: trouble.reason, message: trouble.message }
        : {
            type: ConditionType.Stuck,
            status: 'False',
            reason: ConditionReason.Unstuck,
            message: 'nothing keeps its Pod or volume claim from running',
          },
    );
  if (c.everRan)
    set.push({
      type: ConditionType.Joined,
      status: 'True',
      reason: ConditionReason.Completed,
      message: c.bootstrap
        ? 'started etcd with the new cluster (its seed, or one of the members it started with)'
        : 'etcd started and joined the cluster',
    });
  if (info) {
    set.push(
      info.learner
        ? {
            type: ConditionType.Promoted,
            status: 'False',
            reason: name,
            message: 'a learner: promoted once it is in sync with the leader',
          }
        : {
            type: ConditionType.Promoted,
            status: 'True',
            reason: ConditionReason.Completed,
            message: `a voter of etcd (member ${info.id})`,
          },
    );
  }
  const conditions = setConditions(previous?.conditions, set, step.generation, new Date(now));
  return {
    observedGeneration: step.generation,
    state,
    ...(info ? { memberID: info.id, role: info.learner ? ('learner' as const) : ('voter' as const) } : {}),
    podName: c.member.name,
    ...(c.medium === 'Memory' ? {} : { pvcName: pvcName(c.member.name) }),
    // Once true, the Pod's check-data init container refuses an empty data directory.
    ...(c.everRan || c.etcdStarted ? { dataInitialized: true } : {}),
    conditions,
  };
}

/** The state EtcdMember.status.state shows: one of MEMBER_STATES, as the CRD's enum admits no other. */
function shown(state: MemberState | undefined, path: string): MemberState {
  // A path the member machine lacks is a bug test/machines/member-state.test.ts catches: the API server would refuse it.
  if (state === undefined) throw new Error(`member machine state ${path} shows none of MEMBER_STATES`);
  return state;
}

/** The Stuck condition when it just turned True or changed its reason; undefined otherwise. */
export function newlyStuck(
  before: readonly Condition[] | undefined,
  after: readonly Condition[] | undefined,
): Condition | undefined {
  const was = before?.find((c) => c.type === ConditionType.Stuck);
  const now = after?.find((c) => c.type === ConditionType.Stuck);
  if (now?.status !== 'True') return undefined;
  return was?.status === 'True' && was.reason === now.reason ? undefined : now;
}
