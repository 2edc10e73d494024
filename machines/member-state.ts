/**
 * What EtcdMember.status.state shows: the member machine's top state, or, inside a state, what
 * it means to a reader (a parked member whose Pod is gone is dormant, a started learner is
 * promoting, a restarted Pod that runs but is not Ready is notReady). One list, read by the
 * code that writes and reads the state and by the CRD's enum (api/v1alpha1/etcdmember.ts).
 */

/** Every value EtcdMember.status.state takes, in the order a member usually meets them. */
export const MEMBER_STATES = [
  'pending',
  'deciding',
  'creatingVolume',
  'bootstrapping',
  'joiningLearner',
  'promoting',
  'voter',
  'restarting',
  'notReady',
  'rechecking',
  'upgrading',
  'parking',
  'dormant',
  'replacing',
  'nodeLost',
  'removing',
  'removed',
  'failed',
] as const;

/** One of MEMBER_STATES. */
export type MemberState = (typeof MEMBER_STATES)[number];

/** Each member state by name, for comparisons the compiler checks (`m.state === MEMBER_STATE.voter`). */
export const MEMBER_STATE = Object.fromEntries(MEMBER_STATES.map((s) => [s, s])) as {
  readonly [S in MemberState]: S;
};

/** Whether `s` is a member state. */
export const isMemberState = (s: string): s is MemberState => (MEMBER_STATES as readonly string[]).includes(s);
