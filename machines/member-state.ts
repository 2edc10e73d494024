/**
 * What EtcdMember.status.state shows: the member machine's top state, or, inside a state, what
 * it means to a reader (a parked member whose Pod is gone is dormant, a started learner is
 * promoting, a restarted Pod that runs but is not Ready is notReady, an upgrade onto an older
 * version is downgrading, one onto the version it runs, for CAs to trust or --force-new-cluster, is
 * reconfiguring). One list, read by the code that writes and reads the state and by the CRD's enum
 * (api/v1alpha1/etcdmember.ts).
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
  'downgrading',
  'reconfiguring',
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

/** The states shown from inside another top state rather than being one (see `shownState`). */
const SHOWN_WITHIN = [
  MEMBER_STATE.promoting,
  MEMBER_STATE.notReady,
  MEMBER_STATE.downgrading,
  MEMBER_STATE.reconfiguring,
  MEMBER_STATE.dormant,
] as const;

/**
 * The member machine's top-level states: every member state but those shown from inside one.
 * machines/member.ts's `states` satisfies a record of exactly these, so a state the machine has
 * and the list lacks, or the other way round, fails to compile.
 */
export type MemberMachineState = Exclude<MemberState, (typeof SHOWN_WITHIN)[number]>;

/** Whether `s` is a member state. */
export const isMemberState = (s: string): s is MemberState => (MEMBER_STATES as readonly string[]).includes(s);

/** Whether `s` is one of the member machine's top-level states. */
const isMachineState = (s: string): s is MemberMachineState =>
  isMemberState(s) && !(SHOWN_WITHIN as readonly string[]).includes(s);

/**
 * Where the member's restart onto its spec takes its etcd: a newer version, an older one, or the
 * one it runs (a Pod made again for CAs to trust or for --force-new-cluster).
 */
export type VersionMove = 'up' | 'down' | 'none';

/**
 * What status.state shows for the member machine at the dotted `path`, given whether its Pod
 * runs (and is not being deleted) and where a restart onto its spec takes its version;
 * undefined for a path whose top the machine does not have.
 */
export function shownState(path: string, podRunning: boolean, move: VersionMove = 'up'): MemberState | undefined {
  const [top = '', sub = ''] = path.split('.');
  // A parked member is dormant only once its Pod is really gone; a started learner waits to be promoted.
  if (top === MEMBER_STATE.parking && sub === 'stopped') return MEMBER_STATE.dormant;
  if (top === MEMBER_STATE.joiningLearner && sub === 'catchingUp') return MEMBER_STATE.promoting;
  // A Pod that runs but is not Ready is not being restarted: its etcd answers no health check
  // (a member of a cluster without quorum looks like this, the healthy ones too).
  if (top === MEMBER_STATE.restarting && sub === 'awaitingReady' && podRunning) return MEMBER_STATE.notReady;
  // The machine's one step makes the Pod again on its spec whatever changed: shown as what it does
  // to the version.
  if (top === MEMBER_STATE.upgrading && move === 'down') return MEMBER_STATE.downgrading;
  if (top === MEMBER_STATE.upgrading && move === 'none') return MEMBER_STATE.reconfiguring;
  return isMachineState(top) ? top : undefined;
}
