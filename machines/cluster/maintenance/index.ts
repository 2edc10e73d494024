/** Maintenance (defragmentation, NOSPACE recovery): rules, steps, states and words, in one folder. */
export * from './rules.ts';
export { compactParams, defragMoveLeaderParams, defragmentParams, disarmParams } from './steps.ts';
export { maintenanceGuards, maintenanceUpdates } from './steps.ts';
export { MAINTENANCE, defragmenting, outOfSpace, recoveringSpace } from './states.ts';
export * from './describe.ts';
