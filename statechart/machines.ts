/**
 * The machines the charts draw, each with what its `describe` needs: a context. The
 * plain chart describes every state with the machine's initial context (a placeholder
 * object); an overlay describes the current state with the context the journal kept.
 */
import { initialTransition, type AnyStateMachine } from 'xstate';
import {
  clusterMachine,
  describeCluster,
  describeMember,
  memberMachine,
  type ClusterContext,
  type MemberContext,
} from '../machines/index.ts';
import { describeSnapshot } from '../machines/describe-snapshot.ts';
import type { SnapshotContext } from '../machines/snapshot-decide.ts';
import { snapshotMachine } from '../machines/snapshot.ts';
import { describeSchedule } from '../machines/describe-snapshot-schedule.ts';
import type { ScheduleContext } from '../machines/snapshot-schedule-decide.ts';
import { snapshotScheduleMachine } from '../machines/snapshot-schedule.ts';
import type { ConcernName } from '../machines/cluster/concerns.ts';
import { CONCERN_MACHINES, CONCERN_NAMES } from './concerns.ts';
import { chartOf, type Chart } from './model.ts';

import { MACHINE_NAMES, type MachineName } from './names.ts';

export { MACHINE_NAMES, type MachineName } from './names.ts';

interface Entry {
  readonly machine: AnyStateMachine;
  readonly input: unknown;
  readonly describe: (path: string, context: unknown) => { step: string; message: string };
}

const ref = { namespace: 'NAMESPACE', name: 'NAME', uid: 'UID' };
const MACHINES: Record<MachineName, Entry> = {
  cluster: {
    machine: clusterMachine,
    input: { cluster: ref },
    describe: (path, c) => describeCluster(path, c as ClusterContext),
  },
  member: {
    machine: memberMachine,
    input: { member: { ...ref, cluster: 'CLUSTER' }, bootstrap: false, medium: '' },
    describe: (path, c) => describeMember(path, c as MemberContext),
  },
  snapshot: {
    machine: snapshotMachine,
    input: { snapshot: { ...ref, cluster: 'CLUSTER' } },
    describe: (path, c) => describeSnapshot(path, c as SnapshotContext),
  },
  schedule: {
    machine: snapshotScheduleMachine,
    input: { schedule: { ...ref, cluster: 'CLUSTER' } },
    describe: (path, c) => describeSchedule(path, c as ScheduleContext),
  },
  // The cluster machine's concerns, each on its own (the whole chart has them too).
  ...concernEntries(),
};

/** An entry per concern: its chart machine, described as the cluster machine describes it. */
function concernEntries(): Record<ConcernName, Entry> {
  const entry = (machine: AnyStateMachine): Entry => ({
    machine,
    input: { cluster: ref },
    describe: (path, c) => describeCluster(path, c as ClusterContext),
  });
  return Object.fromEntries(CONCERN_NAMES.map((name) => [name, entry(CONCERN_MACHINES[name])])) as Record<
    ConcernName,
    Entry
  >;
}

/** True when `name` is a machine a chart can be drawn for. */
export const isMachineName = (name: string): name is MachineName => (MACHINE_NAMES as readonly string[]).includes(name);

/** The machine object behind a name. */
export const machineNamed = (name: MachineName): AnyStateMachine => MACHINES[name].machine;

/** What a user reads for `path` given a context (the initial one when the journal kept none). */
export const describeState = (name: MachineName, path: string, context?: unknown) =>
  MACHINES[name].describe(path, typeof context === 'object' && context !== null ? context : initialContext(name));

const initialContext = (name: MachineName): unknown =>
  initialTransition(MACHINES[name].machine, MACHINES[name].input as never)[0].context;

/** The chart of a machine, every state described with its initial context. */
export function machineChart(name: MachineName): Chart {
  const context = initialContext(name);
  return chartOf(MACHINES[name].machine, (path) => MACHINES[name].describe(path, context));
}
