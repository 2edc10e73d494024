/**
 * createRestoreJob: the Job that reads a restored cluster's snapshot whole and checks it (etcd's
 * hash at its end, and the SHA-256 it was stored with) before any member exists. Named after
 * the cluster and owned by it: recover finds it by name, a repeated run finds it there.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import { buildRestoreJob, restoreJobName, sourceLocation } from './build-restore.ts';
import { DEFAULT_AGENT_IMAGE, type KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { controllerUid } from './meta.ts';
import { readCluster } from './objects.ts';
import { restoreSource } from './restore-source.ts';

/** The Job's uid, and where the snapshot it checks is. */
export type RestoreJobResult = { readonly uid: string; readonly location: string };

/** Creates the check Job of the cluster's bootstrap.restore snapshot. */
export const createRestoreJob: IntentHandler<'createRestoreJob', RestoreJobResult, KubeContext> = {
  kind: 'createRestoreJob',
  async run(_params, ctx) {
    const cluster = await readCluster(ctx);
    const source = await restoreSource(ctx, cluster);
    if (!source)
      throw new EffectError(ERR.RESTORE_SOURCE, `EtcdCluster ${ctx.cluster.name} has no spec.bootstrap.restore`, {
        retryable: false,
      });
    const namespace = ctx.cluster.namespace;
    const body = buildRestoreJob(cluster, source, ctx.agentImage ?? DEFAULT_AGENT_IMAGE, ctx.pods);
    const name = body.metadata?.name ?? '';
    const { object } = await createOwned<V1Job>({
      what: `Job ${namespace}/${name}`,
      code: ERR.CREATE_JOB,
      foreign: ERR.CREATE_JOB_FOREIGN,
      ownerUid: ctx.cluster.uid,
      create: () => ctx.kube.batch.createNamespacedJob({ namespace, body }, callOptions(ctx.signal)),
      read: () => ctx.kube.batch.readNamespacedJob({ name, namespace }, callOptions(ctx.signal)),
    });
    return { uid: object.metadata?.uid ?? '', location: sourceLocation(source) };
  },
  async recover(params, ctx): Promise<Recovered<RestoreJobResult>> {
    const name = restoreJobName(params.cluster);
    const job = await readOrNull(ERR.CREATE_JOB, `reading Job ${name}`, () =>
      ctx.kube.batch.readNamespacedJob({ name, namespace: ctx.cluster.namespace }, callOptions(ctx.signal)),
    );
    if (!job || job.metadata?.deletionTimestamp || controllerUid(job.metadata) !== ctx.cluster.uid)
      return { done: false };
    const cluster = await readCluster(ctx);
    const source = await restoreSource(ctx, cluster);
    return { done: true, result: { uid: job.metadata?.uid ?? '', location: source ? sourceLocation(source) : '' } };
  },
};
