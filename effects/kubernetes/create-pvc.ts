/** createPVC: the member's PersistentVolumeClaim `data-<member>`, owned by its EtcdMember. */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import { buildPVC, inMemory } from './build-pvc.ts';
import type { KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { controllerUid, pvcName } from './meta.ts';
import { readCluster, readMember, requireMember } from './objects.ts';

/** The claim's name, or null for a member that keeps its data in memory. */
export type CreatePVCResult = { readonly pvc: string | null };

/** Creates the claim (none for medium Memory); one of ours already there counts as done. */
export const createPVC: IntentHandler<'createPVC', CreatePVCResult, KubeContext> = {
  kind: 'createPVC',
  async run(params, ctx) {
    const member = await requireMember(ctx, params.member);
    const body = buildPVC(member, await readCluster(ctx));
    if (!body) return { pvc: null };
    const namespace = ctx.cluster.namespace;
    const name = pvcName(params.member);
    await createOwned<V1PersistentVolumeClaim>({
      what: `PersistentVolumeClaim ${namespace}/${name}`,
      code: ERR.CREATE_PVC,
      foreign: ERR.CREATE_PVC_FOREIGN,
      ownerUid: member.metadata.uid ?? '',
      create: () => ctx.kube.core.createNamespacedPersistentVolumeClaim({ namespace, body }, callOptions(ctx.signal)),
      read: () => ctx.kube.core.readNamespacedPersistentVolumeClaim({ name, namespace }, callOptions(ctx.signal)),
    });
    return { pvc: name };
  },
  async recover(params, ctx): Promise<Recovered<CreatePVCResult>> {
    const member = await readMember(ctx, params.member);
    if (!member) return { done: false };
    if (inMemory(member)) return { done: true, result: { pvc: null } };
    const name = pvcName(params.member);
    const pvc = await readOrNull(ERR.CREATE_PVC, `reading PersistentVolumeClaim ${name}`, () =>
      ctx.kube.core.readNamespacedPersistentVolumeClaim(
        { name, namespace: ctx.cluster.namespace },
        callOptions(ctx.signal),
      ),
    );
    if (!pvc || controllerUid(pvc.metadata) !== member.metadata.uid) return { done: false };
    return { done: true, result: { pvc: name } };
  },
};
