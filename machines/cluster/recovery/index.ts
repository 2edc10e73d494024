/** Recovery from a quorum lost for good (spec.recovery): rules, steps, states and words, in one folder. */
export * from './rules.ts';
export { deleteLostParams, forceParams, recoveryGuards, recoveryUpdates, stopLostParams } from './steps.ts';
export { RECOVERY, recovering } from './states.ts';
export {
  lossMessage,
  recoveredMessage,
  recoveringMessage,
  recoveryCondition,
  recoveryHint,
  recoveryWords,
} from './describe.ts';
