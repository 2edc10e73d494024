/** Volume growth (storage.size raised): rules, steps, states and words, in one folder. */
export * from './rules.ts';
export { growVolumeParams, volumeGuards, volumeUpdates } from './steps.ts';
export { VOLUMES, resizingVolumes, volumesRefused } from './states.ts';
export { growMessage, refusedMessage, volumeWords } from './describe.ts';
