/** forceDeletePod: deletes a member's Pod left on a lost node at once (grace 0), once the member is out of etcd. */
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, deleteOrGone } from './_util.ts';
import type { KubeContext } from './context.ts';
import { controllerUid } from './meta.ts';
import { readMember, readMemberPod } from './objects.ts';

/** Nothing to report. */
export type ForceDeletePodResult = Record<string, never>;

/**
 * Deletes the Pod with this uid with grace period 0, as `kubectl delete --force` does: its node
 * is down, so no kubelet will confirm it stopped. A missing Pod, or another one by that name, is done.
 */
export const forceDeletePod: IntentHandler<'forceDeletePod', ForceDeletePodResult, KubeContext> = {
  kind: 'forceDeletePod',
  async run(params, ctx) {
    const namespace = ctx.cluster.namespace;
    const name = params.member;
    const pod = await readMemberPod(ctx, name);
    if (!pod || pod.metadata?.uid !== params.uid) return {};
    const member = await readMember(ctx, name);
    if (member && controllerUid(pod.metadata) !== member.metadata.uid) {
      throw new EffectError(ERR.DELETE_POD_FOREIGN, `Pod ${namespace}/${name} does not belong to EtcdMember ${name}`, {
        retryable: false,
      });
    }
    const body = { gracePeriodSeconds: 0, preconditions: { uid: params.uid } };
    await deleteOrGone(ERR.DELETE_POD, `force-deleting Pod ${name}`, () =>
      ctx.kube.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0, body }, callOptions(ctx.signal)),
    );
    return {};
  },
  async recover(params, ctx): Promise<Recovered<ForceDeletePodResult>> {
    const pod = await readMemberPod(ctx, params.member);
    return !pod || pod.metadata?.uid !== params.uid ? { done: true, result: {} } : { done: false };
  },
};
