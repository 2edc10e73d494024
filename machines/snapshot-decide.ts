/**
 * The snapshot machine's context, guards, updates and its one decision. A snapshot is taken
 * once: by a Job that streams it from one healthy voter, stores it and reads it back. It is
 * Succeeded only with the Job's report of what was stored and checked; a Job that failed, or a
 * cluster it could not be taken from when asked, makes it Failed for good (a schedule makes the
 * next one). Deleting it stops a running Job first, then deletes what may have been stored
 * (unless Retain) before its finalizer goes. With spec.verify, a stored snapshot is then proved
 * by a verify Job that restores it into a throwaway etcd and checks it against what was recorded;
 * its verdict (or why it could not run) is recorded once, and the snapshot stays Succeeded.
 */
import { ERR } from './error-codes.ts';
import { permanentFailure } from './policy.ts';
import { NO_STEP, stepUpdates, toAssigns, type StepBookkeeping, type Update } from './kit.ts';
import type {
  SnapshotVerdict,
  CreateSnapshotJobParams,
  JobObservation,
  ObjectRef,
  SnapshotClusterObservation,
  SnapshotEvent,
  SnapshotHoldParams,
  SnapshotParams,
  SnapshotReport,
} from './types.ts';

/** Everything the snapshot machine knows. Plain JSON: journaled with every step. */
export interface SnapshotContext extends StepBookkeeping {
  readonly snapshot: ObjectRef & { readonly cluster: string };
  readonly specSeen: boolean;
  readonly deleting: boolean;
  readonly retain: boolean;
  readonly finalizer: boolean;
  /** Absent until observed. */
  readonly cluster?: SnapshotClusterObservation;
  /** The snapshot Job and the Job deleting what it stored; absent until observed, null when there is none. */
  readonly job?: JobObservation | null;
  readonly deleteJob?: JobObservation | null;
  /** The EtcdMember the snapshot is taken from, chosen as its Job is asked for. */
  readonly member: string | null;
  /** A snapshot Job was asked for: something may be stored, so deleting cleans up. */
  readonly jobAsked: boolean;
  /** The uid of a snapshot Job seen since it was asked for: one that goes after that was deleted by someone. */
  readonly jobSeen: string | null;
  readonly startedAt: number | null;
  readonly completedAt: number | null;
  readonly result: SnapshotReport | null;
  /** Why the snapshot failed for good. */
  readonly failure: string | null;
  /** Removing it failed in a way retrying cannot fix: it stays failed (and its finalizer on) until edited. */
  readonly removalFailed: boolean;
  /** Why the stored snapshot was kept although the policy is Delete (its namespace was being deleted). */
  readonly kept?: string | null;
  /** spec.verify: prove the stored snapshot by restoring it. Absent in contexts journaled before it existed. */
  readonly verify?: boolean;
  /** The verify Job; absent until observed, null when there is none. */
  readonly verifyJob?: JobObservation | null;
  /** A verify Job was asked for, and the uid of one seen since (as for the snapshot Job). */
  readonly verifyAsked?: boolean;
  readonly verifyJobSeen?: string | null;
  /** What verifying found, and when; null until it finished. */
  readonly verification?: (SnapshotVerdict & { readonly at: number }) | null;
  /** The EtcdClusters restoring from it (their finalizer on it): its stored file is kept while any does. */
  readonly heldBy?: readonly string[];
  /** Holds of EtcdClusters gone or being deleted: let go by the snapshot machine, as nothing else will. */
  readonly staleHolds?: readonly string[];
}

/** What a snapshot machine starts from. */
export interface SnapshotInput {
  readonly snapshot: ObjectRef & { readonly cluster: string };
}

/** The context of a snapshot not observed yet. */
export const initialSnapshotContext = (i: SnapshotInput): SnapshotContext => ({
  snapshot: i.snapshot,
  specSeen: false,
  deleting: false,
  retain: false,
  finalizer: false,
  verify: false,
  verifyAsked: false,
  verifyJobSeen: null,
  verification: null,
  member: null,
  jobAsked: false,
  jobSeen: null,
  startedAt: null,
  completedAt: null,
  result: null,
  failure: null,
  removalFailed: false,
  ...NO_STEP,
});

/** Why no snapshot can be taken of the cluster now; null when it can (or it is not known yet). */
export function refusal(c: SnapshotContext): string | null {
  const cl = c.cluster;
  const name = `EtcdCluster ${c.snapshot.cluster}`;
  if (!cl) return null;
  if (!cl.exists) return `${name} does not exist`;
  if (cl.deleting) return `${name} is being deleted`;
  if (cl.dormant) return `${name} is scaled to zero: no member runs to take a snapshot from`;
  if (cl.candidates?.length === 0)
    return `${name} has no healthy voting member with a leader (quorum lost?): a snapshot now could miss acknowledged writes`;
  return null;
}

type Ctx = { context: SnapshotContext };

const active = (j: JobObservation | null | undefined): boolean => Boolean(j && !j.succeeded && j.failed === null);

/** Guards by name. */
export const guards = {
  // The verify Job is not awaited here: creating it finds one already there (a repeated run).
  observed: ({ context: c }: Ctx) =>
    c.specSeen && c.cluster !== undefined && c.job !== undefined && c.deleteJob !== undefined,
  jobPresent: ({ context: c }: Ctx) => Boolean(c.job),
  jobActive: ({ context: c }: Ctx) => active(c.job),
  jobGone: ({ context: c }: Ctx) => c.job === null,
  jobSucceeded: ({ context: c }: Ctx) => Boolean(c.job?.succeeded && c.job.report),
  jobFailed: ({ context: c }: Ctx) => Boolean(c.job && c.job.failed !== null),
  // Seen since it was asked for, and gone: someone deleted the Job; it is made again.
  jobVanished: ({ context: c }: Ctx) => c.job === null && c.jobSeen !== null,
  noFinalizer: ({ context: c }: Ctx) => !c.finalizer,
  staleHold: ({ context: c }: Ctx) => (c.staleHolds ?? []).length > 0,
  held: ({ context: c }: Ctx) => (c.heldBy ?? []).length > 0,
  notHeld: ({ context: c }: Ctx) => (c.heldBy ?? []).length === 0 && (c.staleHolds ?? []).length === 0,
  mustDeleteStored: ({ context: c }: Ctx) => c.jobAsked && !c.retain,
  retain: ({ context: c }: Ctx) => c.retain,
  // A failed snapshot being deleted is removed; one whose removal failed waits for an edit (Retain).
  removable: ({ context: c }: Ctx) => c.deleting && !c.removalFailed,
  deleteJobPresent: ({ context: c }: Ctx) => Boolean(c.deleteJob),
  deleteJobSucceeded: ({ context: c }: Ctx) => Boolean(c.deleteJob?.succeeded),
  deleteJobGone: ({ context: c }: Ctx) => c.deleteJob === null,
  namespaceGoing: ({ event }: { event: object }) =>
    'error' in event && (event.error as { code?: string }).code === ERR.NAMESPACE_TERMINATING,
  deleteJobFailed: ({ context: c }: Ctx) => Boolean(c.deleteJob && c.deleteJob.failed !== null),
  verifyJobPresent: ({ context: c }: Ctx) => Boolean(c.verifyJob),
  verifyJobDone: ({ context: c }: Ctx) => Boolean(c.verifyJob?.succeeded && c.verifyJob.verdict),
  verifyJobFailed: ({ context: c }: Ctx) => Boolean(c.verifyJob && c.verifyJob.failed !== null),
  verifyJobVanished: ({ context: c }: Ctx) => c.verifyJob === null && (c.verifyJobSeen ?? null) !== null,
  // The verify Job cannot be made (its create failed for good): recorded as not verified, and why.
  verifyCannotRun: ({ event }: { event: object }) => permanentFailure(event),
};

/** The steps `decideSnapshot` can choose. */
export const SNAPSHOT_DECISIONS = [
  'removing',
  'releasingHold',
  'verifying',
  'succeeded',
  'failed',
  'finalizing',
  'waiting',
  'taking',
] as const;
/** One of SNAPSHOT_DECISIONS. */
export type SnapshotDecision = (typeof SNAPSHOT_DECISIONS)[number];

/** Which step comes next for this snapshot. */
export function decideSnapshot(c: SnapshotContext): SnapshotDecision {
  if (c.deleting) return 'removing';
  // A restore's hold outlived its EtcdCluster (deleted mid-restore): let go of at once, as Kubernetes
  // lets go of a claim whose Pod is gone, not only once someone deletes the snapshot.
  if ((c.staleHolds ?? []).length > 0) return 'releasingHold';
  if (c.result && c.verify && !c.verification) return 'verifying';
  if (c.result) return 'succeeded';
  if (c.failure !== null) return 'failed';
  if (!c.finalizer) return 'finalizing';
  // Once its Job was asked for, the snapshot follows the Job, whatever the cluster does meanwhile.
  if (!c.jobAsked && refusal(c) !== null) return 'failed';
  if (!c.jobAsked && c.cluster?.candidates === null) return 'waiting';
  return 'taking';
}

type Of<T extends SnapshotEvent['type']> = Extract<SnapshotEvent, { type: T }>;

/** Context updates by name; each also moves `now` to the event's time (kit.ts). */
const updates = {
  observeSnapshot: (c, e) => {
    const { deleting, retain, finalizer, verify, heldBy, staleHolds } = e as Of<'k8s.snapshot.updated'>;
    // Switching to Retain is the edit that lets a removal that failed try again, without deleting.
    const removalFailed = c.removalFailed && !(retain && !c.retain);
    const holds = { heldBy: heldBy ?? [], staleHolds: staleHolds ?? [] };
    return { specSeen: true, deleting, retain, finalizer, removalFailed, verify: verify ?? false, ...holds };
  },
  observeCluster: (_, e) => ({ cluster: (e as Of<'k8s.cluster.observed'>).cluster }),
  observeJob: (c, e) => {
    const { job } = e as Of<'k8s.job.observed'>;
    return { job, jobSeen: job && c.jobAsked ? job.uid : c.jobSeen };
  },
  observeDeleteJob: (_, e) => ({ deleteJob: (e as Of<'k8s.deleteJob.observed'>).job }),
  observeVerifyJob: (c, e) => {
    const { job } = e as Of<'k8s.verifyJob.observed'>;
    return { verifyJob: job, verifyJobSeen: job && c.verifyAsked ? job.uid : (c.verifyJobSeen ?? null) };
  },
  observeTime: () => ({}),
  ...stepUpdates,
  recordFinalizer: () => ({ finalizer: true }),
  // Let go of: not asked again before the EtcdSnapshot is observed without it.
  recordHoldReleased: (c) => ({ staleHolds: (c.staleHolds ?? []).slice(1) }),
  // Chosen with the intent, in the same journaled step: a crash after the Job is made still knows it was asked for.
  chooseMember: (c) => ({ member: c.cluster?.candidates?.[0] ?? null, jobAsked: true, jobSeen: null }),
  recordStart: (c) => ({ startedAt: c.startedAt ?? c.now }),
  recordResult: (c) => ({ result: c.job?.report ?? null, completedAt: c.now }),
  // Asked for in the same journaled step as the intent, as chooseMember is.
  askVerify: () => ({ verifyAsked: true, verifyJobSeen: null }),
  recordVerification: (c) => ({
    verification: c.verifyJob?.verdict ? { ...c.verifyJob.verdict, at: c.now } : null,
  }),
  markVerifyFailed: (c) => {
    const why = c.verifyJob?.failed ?? `${c.lastError?.code ?? 'ERR'}: ${c.lastError?.message ?? 'failed'}`;
    const differences = [`the verify Job could not check it: ${why}`];
    return { verification: { verified: false, checked: 'nothing', differences, at: c.now }, retryAt: null };
  },
  markJobFailed: (c) => ({ failure: `the snapshot Job failed: ${c.job?.failed ?? 'no reason given'}` }),
  markRefused: (c) => ({ failure: c.failure ?? refusal(c) }),
  markKept: (c) => ({ kept: c.lastError?.message ?? 'the namespace is being deleted' }),
  // A failure retrying cannot fix (kit.attempt): nothing more is tried.
  markFailed: (c) => ({
    failure: c.failure ?? `${c.lastError?.code ?? 'ERR'}: ${c.lastError?.message ?? 'failed'}`,
    removalFailed: c.deleting,
    retryAt: null,
  }),
} satisfies Record<string, Update<SnapshotContext, SnapshotEvent>>;

/** The updates as xstate assign actions, by name. */
export const assigns = toAssigns<SnapshotContext, SnapshotEvent, typeof updates>(updates);

/** Parameters of the intents, from the context. */
export const params = {
  snapshot: ({ context: c }: Ctx): SnapshotParams => ({ snapshot: c.snapshot.name }),
  staleHold: ({ context: c }: Ctx): SnapshotHoldParams => ({
    snapshot: c.snapshot.name,
    cluster: c.staleHolds?.[0] ?? '',
  }),
  job: ({ context: c }: Ctx): CreateSnapshotJobParams => ({ snapshot: c.snapshot.name, member: c.member ?? '' }),
};
