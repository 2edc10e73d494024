/** createPod: the member's etcd Pod, owned by its EtcdMember, built from the member and its cluster. */
import type { V1Pod } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import { buildPod } from './build-pod.ts';
import type { KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { controllerUid } from './meta.ts';
import { readCluster, readMember, requireMember } from './objects.ts';
import { requireMemberTLS } from './tls-secrets.ts';

/** The Pod's uid. */
export type CreatePodResult = { readonly uid: string };

const readPod = (ctx: KubeContext, name: string): Promise<V1Pod> =>
  ctx.kube.core.readNamespacedPod({ name, namespace: ctx.cluster.namespace }, callOptions(ctx.signal));

/**
 * Creates the Pod; one of ours already running counts as done. One of ours still terminating
 * is a retryable error: its name frees up once it is gone, and then a retry creates the new one.
 */
export const createPod: IntentHandler<'createPod', CreatePodResult, KubeContext> = {
  kind: 'createPod',
  async run(params, ctx) {
    const member = await requireMember(ctx, params.member);
    const cluster = await readCluster(ctx);
    // A Pod whose Secret is missing a key would wait in ContainerCreating, saying so only in Events.
    await requireMemberTLS(ctx, cluster, params.member);
    const body = buildPod(member, cluster, ctx.agentImage, ctx.pods);
    const namespace = ctx.cluster.namespace;
    const { object } = await createOwned<V1Pod>({
      what: `Pod ${namespace}/${params.member}`,
      code: ERR.CREATE_POD,
      foreign: ERR.CREATE_POD_FOREIGN,
      ownerUid: member.metadata.uid ?? '',
      create: () => ctx.kube.core.createNamespacedPod({ namespace, body }, callOptions(ctx.signal)),
      read: () => readPod(ctx, params.member),
      patch: (existing) => {
        if (!existing.metadata?.deletionTimestamp) return Promise.resolve(existing);
        throw new EffectError(
          ERR.CREATE_POD_TERMINATING,
          `the previous Pod ${namespace}/${params.member} is still terminating`,
        );
      },
    });
    return { uid: object.metadata?.uid ?? '' };
  },
  async recover(params, ctx): Promise<Recovered<CreatePodResult>> {
    const member = await readMember(ctx, params.member);
    if (!member) return { done: false };
    const pod = await readOrNull(ERR.CREATE_POD, `reading Pod ${params.member}`, () => readPod(ctx, params.member));
    if (!pod || pod.metadata?.deletionTimestamp || controllerUid(pod.metadata) !== member.metadata.uid)
      return { done: false };
    return { done: true, result: { uid: pod.metadata?.uid ?? '' } };
  },
};
