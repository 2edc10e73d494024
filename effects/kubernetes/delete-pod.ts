import { ERR } from '../../machines/error-codes.ts';
/** deletePod: stops a member's etcd by deleting its Pod (the volume stays). */
import { EffectError } from '../types.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, deleteOrGone } from './_util.ts';
import type { KubeContext } from './context.ts';
import { controllerUid } from './meta.ts';
import { readMember, readMemberPod } from './objects.ts';

/** Nothing to report. */
export type DeletePodResult = Record<string, never>;

/** Deletes the member's Pod if it is ours; a missing or already terminating Pod counts as done. */
export const deletePod: IntentHandler<'deletePod', DeletePodResult, KubeContext> = {
  kind: 'deletePod',
  async run(params, ctx) {
    const namespace = ctx.cluster.namespace;
    const name = params.member;
    const pod = await readMemberPod(ctx, name);
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
    const pod = await readMemberPod(ctx, params.member);
    return !pod || pod.metadata?.deletionTimestamp ? { done: true, result: {} } : { done: false };
  },
};
