/** The rolling upgrade (a version, or CAs to trust): rules, steps, states and words, in one folder. */
export {
  DEFAULT_SNAPSHOT_COUNT,
  downgradeCancelNeeded,
  downgradeNeeded,
  latchDuringRoll,
  logFlushNeeded,
  older,
  outdatedMembers,
  preUpgradeSnapshot,
  trustOutdated,
  versionMoves,
} from './rules.ts';
export type { RollContext, RollView, Upgradee } from './rules.ts';
export { rollGuards, rollUpdates } from './steps.ts';
export { ROLL, upgrading } from './states.ts';
export { rollWords, upgradeMessage } from './describe.ts';
