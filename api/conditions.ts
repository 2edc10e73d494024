/**
 * Condition types and reasons of EtcdCluster and EtcdMember, in one place, and the pure rule
 * for setting one condition in a list: lastTransitionTime moves only when the status does.
 */
import type { Condition } from './v1alpha1/types.generated.ts';

/** Condition types. The first three summarise; the rest record a completed step kind. */
export const ConditionType = {
  /** A quorum of voters is healthy and serves clients. */
  Available: 'Available',
  /** A step is in flight (True) or the target is reached (False). */
  Progressing: 'Progressing',
  /**
   * Something needs attention: a step failed, is past its deadline or keeps failing; an object the
   * spec names is wrong; a member stopped; a voter is unhealthy past a short grace; quorum is at risk.
   */
  Degraded: 'Degraded',
  /** The seed started a new etcd cluster and it grew to the target's voters (set once, when reached). */
  Bootstrapped: 'Bootstrapped',
  /** The last scale-up finished: every wanted voter joined and was promoted (False with ScalingUp until then). */
  ScaledUp: 'ScaledUp',
  /** The last scale-down finished: the removed members left etcd and went (False with ScalingDown until then). */
  ScaledDown: 'ScaledDown',
  /** Every member runs the wanted version, as etcd answers from it (False with Upgrading while a version roll runs; a roll onto new CAs alone leaves it as it was). */
  Upgraded: 'Upgraded',
  /** The last defragmentation run finished on every member it took (False with Incomplete when it skipped one). */
  Defragmented: 'Defragmented',
  /** etcd's NOSPACE alarm is raised (True: writes are refused) or was disarmed (False). */
  SpaceAlarm: 'SpaceAlarm',
  /** Every member's claim shows storage.size after it was raised (True); False with ResizingVolumes until then, or why it cannot grow. */
  VolumesExpanded: 'VolumesExpanded',
  /** The cluster is scaled to zero (True) or woke from it (False). */
  Dormant: 'Dormant',
  /** A member whose data was lost was replaced by a new one. */
  MemberReplaced: 'MemberReplaced',
  /** An etcd member no EtcdMember accounts for was removed. */
  OrphanRemoved: 'OrphanRemoved',
  /** etcd authentication was turned on (spec.auth.enabled): the user root exists with the role root. */
  AuthEnabled: 'AuthEnabled',
  /**
   * The last recovery asked in spec.recovery: done (True, from which survivor, at which revision),
   * running (False, Recovering) or refused (False, RecoveryRefused, with why). Absent until one is asked.
   */
  Recovered: 'Recovered',
  /** EtcdMember: the member's volume exists (or it needs none). */
  VolumeReady: 'VolumeReady',
  /** EtcdMember: the member joined etcd (as the seed or a learner). */
  Joined: 'Joined',
  /**
   * EtcdMember: something keeps its Pod or claim from running (True, Kubernetes' reason: Unschedulable,
   * ErrImagePull, ImagePullBackOff, CrashLoopBackOff, ClaimPending... and its message), or no longer (False).
   * Shown from the first time it was stuck on.
   */
  Stuck: 'Stuck',
  /** EtcdMember: the learner was promoted to a voter. */
  Promoted: 'Promoted',
  /** EtcdSnapshot: stored and read back whole (True), or not yet or never (False, with why). */
  Complete: 'Complete',
  /**
   * EtcdSnapshot with spec.verify: a restore of the stored snapshot matched what was recorded as it
   * was taken (True, with what was checked), or what differed or kept it from being checked (False).
   */
  Verified: 'Verified',
  /** EtcdSnapshotSchedule: the newest finished snapshot succeeded (True), or why the backups are not good (False). */
  BackupHealthy: 'BackupHealthy',
} as const;

/** One of the condition types above. */
export type ConditionTypeName = (typeof ConditionType)[keyof typeof ConditionType];

/** Reasons, CamelCase, one per cause a user may read. Step names (JoiningLearner...) are reasons too. */
export const ConditionReason = {
  /** The step finished. */
  Completed: 'Completed',
  /** A scaling run was overtaken by the opposite one (replicas changed direction) before it finished. */
  Superseded: 'Superseded',
  /** ScaledUp False: a scale-up runs; etcd does not list the target's voters yet. */
  ScalingUp: 'ScalingUp',
  /** ScaledDown False: a scale-down runs; etcd still lists more voters than the target. */
  ScalingDown: 'ScalingDown',
  /** Upgraded False: a roll runs, or etcd does not yet answer from every member with the target version. */
  Upgrading: 'Upgrading',
  /** Upgraded False: a roll down a minor (etcd's downgrade) runs, or etcd does not yet answer from every member with the target version. */
  Downgrading: 'Downgrading',
  /** The step of a roll that restarts members onto new CA certificates alone (a ca.crt changed, no version does). */
  RollingCA: 'RollingCA',
  /** MemberReplaced False: a member whose data or node was lost is being replaced; etcd does not list its replacement a voter yet. */
  Replacing: 'Replacing',
  /** VolumesExpanded False: storage.size was raised; not every member's claim shows it yet. */
  ResizingVolumes: 'ResizingVolumes',
  /** A run ended short of what its condition claims (a member was skipped); the condition says which. */
  Incomplete: 'Incomplete',
  /** Recovered False: a recovery from a lost quorum runs (spec.recovery). */
  Recovering: 'Recovering',
  /** Recovered False: the recovery asked was refused and nothing was changed; the message says why. */
  RecoveryRefused: 'RecoveryRefused',
  /**
   * EtcdMember Stuck True: its restore init container cannot read the snapshot it restores from
   * (the stored object is missing, or not what was stored): no retry fixes it.
   */
  SnapshotUnreadable: 'SnapshotUnreadable',
  /**
   * EtcdSnapshot: deleted while an EtcdCluster restores from it (its finalizer restoring.etcd-operator.dev/CLUSTER):
   * what it stored is kept until that restore no longer needs it.
   */
  InUse: 'InUse',
  /**
   * EtcdSnapshot: the hold (finalizer restoring.etcd-operator.dev/CLUSTER) of an EtcdCluster gone or
   * being deleted, deleted before its restore let go, is being taken off; the snapshot stays as it was.
   */
  ReleasingHold: 'ReleasingHold',
  /** Every voter is healthy and the target is reached. */
  Steady: 'Steady',
  /** A quorum answers. */
  QuorumHealthy: 'QuorumHealthy',
  /** Fewer healthy voters than a quorum. */
  QuorumLost: 'QuorumLost',
  /** No member answered. */
  EtcdUnreachable: 'EtcdUnreachable',
  /** Degraded: healthy voters are exactly a quorum; one more down loses it. */
  QuorumAtRisk: 'QuorumAtRisk',
  /** Degraded: a voter has not answered healthy for longer than a short grace; quorum holds with room. */
  MemberUnhealthy: 'MemberUnhealthy',
  /** Degraded: a member's Pod or claim is stuck past a short grace (its Stuck condition says why). */
  MemberStuck: 'MemberStuck',
  /** EtcdMember Stuck False: nothing keeps its Pod from running any more. */
  Unstuck: 'Unstuck',
  /** Degraded: an object the spec names is wrong (a TLS Secret without ca.crt, a restore source that cannot be used). */
  InvalidReference: 'InvalidReference',
  /** etcd reports another cluster ID than the one latched at bootstrap. */
  ClusterIDMismatch: 'ClusterIDMismatch',
  /** The step in flight took longer than progressDeadlineSeconds. */
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  /** The step in flight failed and is retried with back-off. */
  StepRetrying: 'StepRetrying',
  /** The step cannot go on without a person. */
  StepFailed: 'StepFailed',
  /** A member's machine stopped on a failure retrying cannot fix. */
  MemberFailed: 'MemberFailed',
  /** Nothing is happening yet: the spec was not observed. */
  Pending: 'Pending',
  /** Scaled to zero. */
  ScaledToZero: 'ScaledToZero',
  /** Available False because replicas is 0 on purpose: no member runs, and none should. */
  Dormant: 'Dormant',
  /** EtcdSnapshotSchedule: the spec does not parse (cron expression, time zone, maxAge). */
  InvalidSpec: 'InvalidSpec',
  /** EtcdSnapshotSchedule: the newest finished EtcdSnapshot succeeded. */
  SnapshotSucceeded: 'SnapshotSucceeded',
  /** EtcdSnapshotSchedule: the newest finished EtcdSnapshot failed. */
  SnapshotFailed: 'SnapshotFailed',
  /** EtcdSnapshot Verified: a verify Job restores the stored snapshot and checks it now. */
  Verifying: 'Verifying',
  /** EtcdSnapshot Verified True: the restore's HashKV, revision and key count are those recorded. */
  Matched: 'Matched',
  /** EtcdSnapshot Verified False: the restore differs from what was recorded (the message says how). */
  Differs: 'Differs',
  /** EtcdSnapshot Verified False: the verify Job could not check it (the stored file failed its sha256, etcdutl refused it, or the Job could not run). */
  NotChecked: 'NotChecked',
  /** EtcdSnapshotSchedule BackupHealthy False: the newest snapshot a restore checked was not proved. */
  VerificationFailed: 'VerificationFailed',
  /** EtcdSnapshotSchedule: no snapshot of it has finished yet. */
  NoSnapshotYet: 'NoSnapshotYet',
  /** etcd raised its NOSPACE alarm: the database reached its quota and writes are refused. */
  NoSpace: 'NoSpace',
  /** The NOSPACE alarm was disarmed, or is no longer raised. */
  NoAlarm: 'NoAlarm',
  /** A claim's StorageClass does not allow volume expansion: storage.size is not applied to it. */
  ExpansionNotAllowed: 'ExpansionNotAllowed',
  /** A member runs in memory (storage.medium Memory) and has no volume to create. */
  NoVolumeNeeded: 'NoVolumeNeeded',
  /** Event: the journal was damaged and replaced while the manager ran; the object is adopted from what it shows. */
  JournalReplaced: 'JournalReplaced',
} as const;

/** A condition as setCondition takes it: lastTransitionTime is its to decide. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** The outcome of setCondition: the new list, and whether anything in it changed. */
export interface SetConditionResult {
  readonly conditions: Condition[];
  readonly changed: boolean;
}

/**
 * Sets `condition` in `list` (one entry per type), keeping lastTransitionTime when the status is
 * the same as before. `now` stamps a new or flipped condition. The input list is not modified.
 */
export function setCondition(
  list: readonly Condition[] | undefined,
  condition: ConditionInput,
  now: Date | string,
): SetConditionResult {
  const at = typeof now === 'string' ? now : k8sTime(now);
  const current = list ?? [];
  const index = current.findIndex((c) => c.type === condition.type);
  const old = index >= 0 ? current[index] : undefined;
  const next: Condition = {
    type: condition.type,
    status: condition.status,
    ...(condition.observedGeneration === undefined ? {} : { observedGeneration: condition.observedGeneration }),
    lastTransitionTime: old && old.status === condition.status ? old.lastTransitionTime : at,
    reason: condition.reason,
    message: condition.message,
  };
  if (old && sameCondition(old, next)) return { conditions: [...current], changed: false };
  const conditions = index >= 0 ? current.map((c, i) => (i === index ? next : c)) : [...current, next];
  return { conditions, changed: true };
}

/** Sets each condition in turn, every one stamped with the generation it describes. */
export function setConditions(
  list: readonly Condition[] | undefined,
  conditions: readonly ConditionInput[],
  observedGeneration: number,
  now: Date | string,
): Condition[] {
  let next = [...(list ?? [])];
  for (const condition of conditions) next = setCondition(next, { ...condition, observedGeneration }, now).conditions;
  return next;
}

/** A time as Kubernetes writes metav1.Time: RFC 3339 in UTC, whole seconds. */
export const k8sTime = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.lastTransitionTime === b.lastTransitionTime &&
    a.observedGeneration === b.observedGeneration
  );
}
