/**
 * The plan of the seeded fault run (`make e2e-history`, fault-run.ts): which operator actions run,
 * in which order, and at which of them the manager is killed at which failpoint, all from one
 * seed, so a run can be made again. The actions are crash-sweep scenarios (test/crash/scenarios.ts)
 * run one after the other on one 3-member cluster; the order keeps what they need of each other.
 */
import { FAILPOINTS } from '../../manager/failpoints.ts';
import type { CrashPoint } from '../crash/points.ts';
import { random } from './traffic.ts';

/** One action of the run: a crash-sweep scenario's action, and where the manager dies in it. */
export interface PlannedAction {
  /** 1 for the first round of actions. */
  readonly round: number;
  readonly scenario: string;
  /** The failpoint the manager is armed at for this action (it may end before reaching it). */
  readonly kill?: CrashPoint;
}

/** What the plan may use. */
export interface PlanOptions {
  /** The etcd versions the cluster's nodes can run: the 3.7 roll and its downgrade need 3.7.3. */
  readonly versions: readonly string[];
  /** How many rounds of the actions (default 3). */
  readonly rounds?: number;
  /** In how many actions of each round the manager is killed (default 3). */
  readonly kills?: number;
}

/** The version the cluster is created at: the 3.5 -> 3.6 roll comes first among the rolls. */
export const FIRST_VERSION = '3.5.35';

/**
 * The rolls of a round, in the only order they can go. The first: up from 3.5, up again when 3.7
 * is there, then one minor down. The next ones: up one minor and down again.
 */
function rolls(round: number, versions: readonly string[]): string[] {
  if (!versions.includes('3.7.3')) return ['upgrade', 'downgrade'];
  return round === 1 ? ['upgrade', 'upgrade-3.7', 'downgrade-3.7'] : ['upgrade-3.7', 'downgrade-3.7'];
}

/**
 * Units shuffled as wholes: a scale-up to 5 is followed at once by the scale-down to 3 (the
 * other actions, the rollback in place among them, are written for 3 members). The defragmentation is in the first round only: once
 * its condition says Completed, a later round's wait for it would be over before any defrag.
 */
const UNITS: readonly (readonly string[])[] = [
  ['scale-3-5', 'scale-5-3'],
  ['replacement'],
  ['node-loss'],
  ['ca-change'],
  ['rollback'],
];
const FIRST_ROUND_ONLY: readonly (readonly string[])[] = [['defrag']];

/** The n a kill is armed at: past the restarted manager's first steps, within a short action. */
const KILL_N = { min: 3, max: 16 };

/** The actions of the run with `seed`, in order: each round's units shuffled, the manager killed in some. */
export function planFaultRun(seed: number, o: PlanOptions): PlannedAction[] {
  const rand = random(seed);
  const pick = (n: number): number => Math.floor(rand() * n);
  const plan: PlannedAction[] = [];
  for (let round = 1; round <= (o.rounds ?? 3); round++) {
    const chain = rolls(round, o.versions);
    // Each roll a unit of its own; shuffled, the rolls' places are then given to them in order.
    const units: (readonly string[])[] = [
      ...UNITS,
      ...(round === 1 ? FIRST_ROUND_ONLY : []),
      ...chain.map((name) => [name]),
    ];
    for (let i = units.length - 1; i > 0; i--) {
      const j = pick(i + 1);
      [units[i], units[j]] = [units[j]!, units[i]!];
    }
    let roll = 0;
    const names = units.flatMap((u) => (chain.includes(u[0]!) ? [chain[roll++]!] : u));
    // The kills: distinct actions, each a failpoint and the n-th time it is reached.
    const killed = new Set<number>();
    for (let k = Math.min(o.kills ?? 3, names.length); killed.size < k;) killed.add(pick(names.length));
    for (const [i, scenario] of names.entries()) {
      if (!killed.has(i)) {
        plan.push({ round, scenario });
        continue;
      }
      const failpoint = FAILPOINTS[pick(FAILPOINTS.length)]!;
      plan.push({ round, scenario, kill: { failpoint, n: KILL_N.min + pick(KILL_N.max - KILL_N.min + 1) } });
    }
  }
  return plan;
}
