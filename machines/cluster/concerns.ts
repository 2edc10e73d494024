/**
 * The one list of the cluster machine's concerns: their states, guards and updates (which the
 * machine spreads in), their words (which describe.ts and the manager's status assemble), and
 * the coordinator's own steps whose end is a condition. A new concern is one line in each list.
 */
import { ConditionReason } from '../../api/conditions.ts';
import { liveVoters, lostMember } from '../cluster-decide.ts';
import type { Completion, ConcernWords, Hold } from './concern.ts';
import { stepOf, type ClusterStep } from './ids.ts';
import * as maintenance from './maintenance/index.ts';
import * as recovery from './recovery/index.ts';
import * as roll from './roll/index.ts';
import * as volumes from './volumes/index.ts';

/** Each concern's top-level states, by concern: drawn on their own as well as in the whole. */
export const CONCERN_STATES = {
  roll: { upgrading: roll.upgrading },
  maintenance: {
    recoveringSpace: maintenance.recoveringSpace,
    outOfSpace: maintenance.outOfSpace,
    defragmenting: maintenance.defragmenting,
  },
  volumes: { resizingVolumes: volumes.resizingVolumes, volumesRefused: volumes.volumesRefused },
  recovery: { recovering: recovery.recovering },
} as const;

/** One of the concerns. */
export type ConcernName = keyof typeof CONCERN_STATES;

/** Every concern's states, as the cluster machine has them. */
export const CONCERN_TOP_STATES = {
  ...CONCERN_STATES.roll,
  ...CONCERN_STATES.maintenance,
  ...CONCERN_STATES.volumes,
  ...CONCERN_STATES.recovery,
} as const;

/** Every concern's guards, by name. */
export const CONCERN_GUARDS = {
  ...roll.rollGuards,
  ...maintenance.maintenanceGuards,
  ...volumes.volumeGuards,
  ...recovery.recoveryGuards,
};

/** Every concern's context updates, by name. */
export const CONCERN_UPDATES = {
  ...roll.rollUpdates,
  ...maintenance.maintenanceUpdates,
  ...volumes.volumeUpdates,
  ...recovery.recoveryUpdates,
};

/** The concerns the cluster machine starts and awaits, by their words. */
export const CONCERNS: readonly ConcernWords[] = [
  roll.rollWords,
  maintenance.maintenanceWords,
  volumes.volumeWords,
  recovery.recoveryWords,
];

/** The coordinator's own steps whose end is a condition: each finishes when it is left. */
const COORDINATOR: Readonly<Partial<Record<ClusterStep, Completion>>> = {
  // The step ends at the new member's promotion, or without one when its own node is lost (the
  // next run replaces it): replaced once etcd's fresh list holds the target's voters, none lost.
  replacing: {
    condition: 'MemberReplaced',
    message: () => 'a member whose data was lost was replaced by a new one',
    done: (c) =>
      c.leaving === null &&
      c.joining === null &&
      !lostMember(c) &&
      !c.etcdStale &&
      c.etcd !== null &&
      liveVoters(c).length === (c.target?.replicas ?? -1),
    running: {
      reason: ConditionReason.Replacing,
      message: (c) =>
        `replacing a member whose data or node was lost: ${c.etcd ? liveVoters(c).length : 0} of ${c.target?.replicas ?? 0} voters`,
    },
  },
  removingOrphan: {
    condition: 'OrphanRemoved',
    message: () => 'an etcd member no EtcdMember accounted for was removed',
    done: () => true,
  },
  enablingAuth: {
    condition: 'AuthEnabled',
    message: () =>
      'etcd authentication is on: the user root (no password) has the role root, and the operator is root by its client certificate',
    done: () => true,
  },
};

/** Entries of a record by step, typed by step. */
const byStep = <V>(r: Readonly<Partial<Record<ClusterStep, V>>>): [ClusterStep, V][] =>
  Object.entries(r) as [ClusterStep, V][];

/** A step kind that, once left, is recorded as a condition of its own, by step; each says when it is done. */
export const COMPLETES: readonly (readonly [ClusterStep, Completion])[] = [
  ...byStep(COORDINATOR),
  ...CONCERNS.flatMap((w) => byStep(w.completes)),
];

/** Conditions held False while a concern's step rests, by step. */
const HOLDS: Readonly<Partial<Record<ClusterStep, Hold>>> = Object.fromEntries(
  CONCERNS.flatMap((w) => byStep(w.holds ?? {})),
);

/** The condition the state at a dotted path holds False while it rests there, if any. */
export function holdAt(path: string): Hold | undefined {
  const step = stepOf(path);
  return step && HOLDS[step];
}

/** The membership runs of the coordinator, by the step that runs each (ScaledUp, ScaledDown). */
const MEMBERSHIP_RUNS = { scalingUp: 'up', scalingDown: 'down' } as const satisfies Partial<
  Record<ClusterStep, string>
>;

/** A membership run: members added (`up`) or removed (`down`) one per step until etcd lists the target. */
export type MembershipRun = (typeof MEMBERSHIP_RUNS)[keyof typeof MEMBERSHIP_RUNS];

/** The membership run the state at a dotted path is in, if any. */
export function membershipRun(path: string): MembershipRun | undefined {
  const step = stepOf(path);
  return step && step in MEMBERSHIP_RUNS ? MEMBERSHIP_RUNS[step as keyof typeof MEMBERSHIP_RUNS] : undefined;
}

/** What a concern says about one of its steps; undefined for the coordinator's own steps. */
export function concernMessage(path: string, c: Parameters<Completion['message']>[0]): string | undefined {
  const [step, sub] = [stepOf(path), path.split('.').slice(1).join('.')];
  return step && CONCERNS.find((w) => w.describe[step])?.describe[step]?.(sub, c);
}

/** A concern's name for the step at a dotted path, where it names it by the context; undefined otherwise. */
export function concernStep(path: string, c: Parameters<Completion['message']>[0]): string | undefined {
  const step = stepOf(path);
  return step && CONCERNS.find((w) => w.names?.[step])?.names?.[step]?.(c);
}
