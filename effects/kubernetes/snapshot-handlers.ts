/**
 * The handlers of the snapshot machine: its finalizer, the Job that takes the snapshot, and the
 * Job that deletes what it stored. Each Job is named after its EtcdSnapshot and owned by it, so
 * recover finds it by name and a repeated run finds it already there.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { callOptions, deleteOrGone, httpStatus, messageOf, readOrNull } from './_util.ts';
import {
  buildSnapshotDeleteJob,
  buildSnapshotJob,
  snapshotDeleteJobName,
  snapshotJobName,
} from './build-snapshot-job.ts';
import { buildVerifyJob, verifyJobName, verifyRefusal } from './build-verify-job.ts';
import { DEFAULT_AGENT_IMAGE, type KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { changeFinalizer, hasFinalizer } from './finalizers.ts';
import { controllerUid, PLURAL, SNAPSHOT_FINALIZER } from './meta.ts';
import { readClusterNamed, requireSnapshot } from './objects.ts';

/** Nothing to report. */
export type NoResult = Record<string, never>;
/** The Job's uid. */
export type JobResult = { readonly uid: string };

const finalizerOf = (snapshot: string) =>
  ({
    plural: PLURAL.snapshot,
    name: snapshot,
    finalizer: SNAPSHOT_FINALIZER,
    what: `EtcdSnapshot ${snapshot}`,
  }) as const;

/** Whether the EtcdSnapshot carries our finalizer; null when it is gone. */
const snapshotFinalized = (ctx: KubeContext, snapshot: string): Promise<boolean | null> =>
  hasFinalizer(ctx, { ...finalizerOf(snapshot), code: ERR.READ_SNAPSHOT });

/** Puts the finalizer on before any Job runs: what a Job stores is then deleted with the EtcdSnapshot. */
export const addSnapshotFinalizer: IntentHandler<'addSnapshotFinalizer', NoResult, KubeContext> = {
  kind: 'addSnapshotFinalizer',
  async run(params, ctx) {
    const change = { ...finalizerOf(params.snapshot), add: true, code: ERR.ADD_FINALIZER };
    await changeFinalizer(ctx, change, ERR.SNAPSHOT_GONE);
    return {};
  },
  async recover(params, ctx): Promise<Recovered<NoResult>> {
    return (await snapshotFinalized(ctx, params.snapshot)) ? { done: true, result: {} } : { done: false };
  },
};

/** Takes the finalizer off; an EtcdSnapshot that is gone, or has none, counts as done. */
export const releaseSnapshotFinalizer: IntentHandler<'releaseSnapshotFinalizer', NoResult, KubeContext> = {
  kind: 'releaseSnapshotFinalizer',
  async run(params, ctx) {
    const change = { ...finalizerOf(params.snapshot), add: false, code: ERR.RELEASE_FINALIZER };
    await changeFinalizer(ctx, change, ERR.SNAPSHOT_GONE);
    return {};
  },
  async recover(params, ctx): Promise<Recovered<NoResult>> {
    return (await snapshotFinalized(ctx, params.snapshot)) ? { done: false } : { done: true, result: {} };
  },
};

const readJob = (ctx: KubeContext, name: string): Promise<V1Job | null> =>
  readOrNull(ERR.CREATE_JOB, `reading Job ${name}`, () =>
    ctx.kube.batch.readNamespacedJob({ name, namespace: ctx.cluster.namespace }, callOptions(ctx.signal)),
  );

/** Creates a Job owned by the snapshot; one of ours by that name counts as done (a repeated run). */
async function createJob(ctx: KubeContext, ownerUid: string, body: V1Job): Promise<JobResult> {
  const namespace = ctx.cluster.namespace;
  const name = body.metadata?.name ?? '';
  const { object } = await createOwned<V1Job>({
    what: `Job ${namespace}/${name}`,
    code: ERR.CREATE_JOB,
    foreign: ERR.CREATE_JOB_FOREIGN,
    ownerUid,
    create: () => ctx.kube.batch.createNamespacedJob({ namespace, body }, callOptions(ctx.signal)),
    read: () => ctx.kube.batch.readNamespacedJob({ name, namespace }, callOptions(ctx.signal)),
  });
  return { uid: object.metadata?.uid ?? '' };
}

/** Whether a Job of ours by this name exists (and is not being deleted). */
async function recoverJob(ctx: KubeContext, snapshot: string, name: string): Promise<Recovered<JobResult>> {
  const owner = await requireSnapshot(ctx, snapshot).catch((err: unknown) => {
    if (err instanceof EffectError && err.code === ERR.SNAPSHOT_GONE) return null;
    throw err;
  });
  if (!owner) return { done: false };
  const job = await readJob(ctx, name);
  if (!job || job.metadata?.deletionTimestamp || controllerUid(job.metadata) !== owner.metadata.uid)
    return { done: false };
  return { done: true, result: { uid: job.metadata?.uid ?? '' } };
}

const image = (ctx: KubeContext): string => ctx.agentImage ?? DEFAULT_AGENT_IMAGE;

/** Creates the Job that streams the snapshot from the chosen member and checks what it stored. */
export const createSnapshotJob: IntentHandler<'createSnapshotJob', JobResult, KubeContext> = {
  kind: 'createSnapshotJob',
  async run(params, ctx) {
    if (!params.member)
      throw new EffectError(ERR.CREATE_JOB, 'no member was chosen to take the snapshot from', { retryable: false });
    const snapshot = await requireSnapshot(ctx, params.snapshot);
    // Its spec.tls: with client TLS the Job calls the member with the operator's certificate.
    const cluster = (await readClusterNamed(ctx, snapshot.spec.clusterRef.name)) ?? undefined;
    const body = buildSnapshotJob(snapshot, params.member, image(ctx), cluster, ctx.pods);
    return createJob(ctx, snapshot.metadata.uid ?? '', body);
  },
  recover: (params, ctx) => recoverJob(ctx, params.snapshot, snapshotJobName(params.snapshot)),
};

/**
 * Creates the Job that proves the stored snapshot by a restore (build-verify-job.ts). A snapshot
 * with nothing recorded to check against cannot be verified: retrying would not change that.
 */
export const createVerifyJob: IntentHandler<'createVerifyJob', JobResult, KubeContext> = {
  kind: 'createVerifyJob',
  async run(params, ctx) {
    const snapshot = await requireSnapshot(ctx, params.snapshot);
    const refusal = verifyRefusal(snapshot);
    if (refusal) throw new EffectError(ERR.VERIFY_SNAPSHOT, `cannot verify: ${refusal}`, { retryable: false });
    return createJob(ctx, snapshot.metadata.uid ?? '', buildVerifyJob(snapshot, image(ctx), ctx.pods));
  },
  recover: (params, ctx) => recoverJob(ctx, params.snapshot, verifyJobName(params.snapshot)),
};

/** Creates the Job that deletes the stored snapshot, and any upload or partial file left behind. */
export const createSnapshotDeleteJob: IntentHandler<'createSnapshotDeleteJob', JobResult, KubeContext> = {
  kind: 'createSnapshotDeleteJob',
  async run(params, ctx) {
    const snapshot = await requireSnapshot(ctx, params.snapshot);
    try {
      return await createJob(ctx, snapshot.metadata.uid ?? '', buildSnapshotDeleteJob(snapshot, image(ctx), ctx.pods));
    } catch (err) {
      const cause = err instanceof EffectError ? err.cause : err;
      // The API server refuses every create in a namespace being deleted (403, "is being terminated").
      if (httpStatus(cause) === 403 && /being terminated/.test(messageOf(cause)))
        throw new EffectError(
          ERR.NAMESPACE_TERMINATING,
          `namespace ${ctx.cluster.namespace} is being deleted: no Job can run there to delete the stored snapshot`,
          { retryable: false, cause },
        );
      throw err;
    }
  },
  recover: (params, ctx) => recoverJob(ctx, params.snapshot, snapshotDeleteJobName(params.snapshot)),
};

/**
 * Deletes the snapshot Job in the foreground: the Job stays, marked, until its Pods are gone, so
 * the machine that waits for the Job to go knows no upload is running any more.
 */
export const deleteSnapshotJob: IntentHandler<'deleteSnapshotJob', NoResult, KubeContext> = {
  kind: 'deleteSnapshotJob',
  async run(params, ctx) {
    const name = snapshotJobName(params.snapshot);
    await deleteOrGone(ERR.DELETE_JOB, `deleting Job ${name}`, () =>
      ctx.kube.batch.deleteNamespacedJob(
        { name, namespace: ctx.cluster.namespace, propagationPolicy: 'Foreground' },
        callOptions(ctx.signal),
      ),
    );
    return {};
  },
  async recover(params, ctx): Promise<Recovered<NoResult>> {
    const job = await readJob(ctx, snapshotJobName(params.snapshot));
    return !job || job.metadata?.deletionTimestamp ? { done: true, result: {} } : { done: false };
  },
};

/** Every snapshot handler, keyed by the intent kind it carries out. */
export const snapshotHandlers = {
  addSnapshotFinalizer,
  createSnapshotJob,
  deleteSnapshotJob,
  createSnapshotDeleteJob,
  createVerifyJob,
  releaseSnapshotFinalizer,
} as const;
