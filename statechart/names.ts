/** The machines `etcd-operator statechart` draws, by name: one list for the command, its usage and the docs. */
import type { ConcernName } from '../machines/cluster/concerns.ts';
import { CONCERN_NAMES } from './concerns.ts';

const OBJECT_MACHINES = ['cluster', 'member', 'snapshot', 'schedule'] as const;
/** One of {@link MACHINE_NAMES}: a machine an object runs, or one of the cluster machine's concerns. */
export type MachineName = (typeof OBJECT_MACHINES)[number] | ConcernName;
/** The machines a chart can be drawn for: each object's, then each concern of the cluster machine. */
export const MACHINE_NAMES: readonly MachineName[] = [...OBJECT_MACHINES, ...CONCERN_NAMES];
/** The first form of the command, as every usage text writes it. */
export const MACHINE_FORM = `statechart ${MACHINE_NAMES.join('|')}`;
