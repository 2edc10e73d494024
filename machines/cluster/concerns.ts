/**
 * Every concern's words, and the cluster machine's steps whose end is a condition of its own:
 * describe.ts and the manager's status read these, and add nothing of a concern's own.
 */
import type { Completion, ConcernWords, Hold } from './concern.ts';
import { maintenanceWords } from './maintenance/describe.ts';
import { rollWords } from './roll/describe.ts';
import { volumeWords } from './volumes/describe.ts';

/** The concerns the cluster machine starts and awaits, by their words. */
export const CONCERNS: readonly ConcernWords[] = [rollWords, maintenanceWords, volumeWords];

/** The coordinator's own steps whose end is a condition: each finishes when it is left. */
const COORDINATOR: Readonly<Record<string, Completion>> = {
  replacing: {
    condition: 'MemberReplaced',
    message: () => 'a member whose data was lost was replaced by a new one',
    done: () => true,
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

/** A step kind that, once left, is recorded as a condition of its own, by step. */
export const COMPLETES: Readonly<Record<string, Completion>> = {
  ...COORDINATOR,
  ...Object.fromEntries(CONCERNS.flatMap((w) => Object.entries(w.completes))),
};

/** Conditions held False while a concern's step rests, by step. */
export const HOLDS: Readonly<Record<string, Hold>> = Object.fromEntries(
  CONCERNS.flatMap((w) => Object.entries(w.holds ?? {})),
);

/** What a concern says about one of its steps; undefined for the coordinator's own steps. */
export function concernMessage(top: string, sub: string, c: Parameters<Completion['message']>[0]): string | undefined {
  const words = CONCERNS.find((w) => top in w.describe);
  return words?.describe[top]?.(sub, c);
}
