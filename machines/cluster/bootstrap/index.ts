/** A new cluster started whole (etcd's static bootstrap): rules, steps, states and words, in one folder. */
export * from './rules.ts';
export { bootstrapGuards, bootstrapUpdates, startMemberParams } from './steps.ts';
export { STARTING, starting } from './states.ts';
export { startMessage } from './describe.ts';
