/** The cluster and member machines, their vocabulary and their user-facing descriptions. */
export { clusterMachine } from './cluster.ts';
export { decide, initialClusterContext, type ClusterContext, type Decision } from './cluster-decide.ts';
export { memberMachine, decideMember, type MemberDecision } from './member.ts';
export { initialMemberContext, type MemberContext, type MemberInput } from './member-decide.ts';
export { describeCluster, describeMember, type Described } from './describe.ts';
export * from './policy.ts';
export { TAG, pathHasTag, type Tag } from './tags.ts';
export { MEMBER_STATE, MEMBER_STATES, isMemberState, type MemberState } from './member-state.ts';
export type * from './types.ts';
export type { StepBookkeeping } from './kit.ts';
export { CLUSTER_INTENTS, MEMBER_INTENTS } from './intents.ts';
