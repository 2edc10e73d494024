/** The machines `etcd-operator statechart` draws, by name: one list for the command, its usage and the docs. */
export const MACHINE_NAMES = ['cluster', 'member', 'snapshot', 'schedule'] as const;
/** One of {@link MACHINE_NAMES}. */
export type MachineName = (typeof MACHINE_NAMES)[number];
/** The first form of the command, as every usage text writes it. */
export const MACHINE_FORM = `statechart ${MACHINE_NAMES.join('|')}`;
