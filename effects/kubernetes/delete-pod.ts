import { ERR } from '../../machines/error-codes.ts';
/** deletePod: stops a member's etcd by deleting its Pod (the volume stays). */
import { EffectError } from '../types.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, deleteOrGone, readOrNull } from './_util.ts';
import type { KubeContext } from './context.ts';
import { controllerUid } from './meta.ts';
import { readMember } from './objects.ts';

/** Nothing to report. */
export type DeletePodResult = Record<string, never>;

/** Deletes the member's Pod if it is ours; a missing or already terminating Pod counts as done. */
export const deletePod: IntentHandler<'deletePod', DeletePodResult, KubeContext> = {
  kind: 'deletePod',
  async run(params, ctx) {
    const namespace = ctx.cluster.namespace;
    const name = params.member;
    const pod = await readOrNull(ERR.DELETE_POD, `reading Pod ${name}`, () =>
      ctx.kube.core.readNamespacedPod({ name, namespace }, callOptions(ctx.signal)),
    );
    if (!pod || pod.metadata?.deletionTimestamp) return {};
    const member = await readMember(ctx, name);
    if (!member || controllerUid(pod.metadata) !== member.metadata.uid) {
      throw new EffectError(ERR.DELETE_POD_FOREIGN, `Pod ${namespace}/${name} does not belong to EtcdMember ${name}`, {
        retryable: false,
      });
    }
    const body = { preconditions: { uid: pod.metadata?.uid } };
    await deleteOrGone(ERR.DELETE_POD, `deleting Pod ${name}`, () =>
      ctx.kube.core.deleteNamespacedPod({ name, namespace, body }, callOptions(ctx.signal)),
    );
    return {};
  },
  async recover(params, ctx): Promise<Recovered<DeletePodResult>> {
    const pod = await readOrNull(ERR.DELETE_POD, `reading Pod ${params.member}`, () =>
      ctx.kube.core.readNamespacedPod(
        { name: params.member, namespace: ctx.cluster.namespace },
        callOptions(ctx.signal),
      ),
    );
    return !pod || pod.metadata?.deletionTimestamp ? { done: true, result: {} } : { done: false };
  },
};
