/** createMember: the EtcdMember the cluster machine asked for, owned by its cluster. */
import type { EtcdMember, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { callOptions } from './_util.ts';
import { buildEtcdMember } from './build-member.ts';
import type { KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { controllerUid, PLURAL } from './meta.ts';
import { customRef, readCluster, readMember, requireSnapshot } from './objects.ts';
import { sourceOf } from './build-restore.ts';
import { restoreSource } from './restore-source.ts';
import { requireMemberTLS } from './tls-secrets.ts';

/**
 * The EtcdSnapshot a seed restores from; one being deleted is gone (its stored file goes with it,
 * and the seed's Pod could not fetch it): a non-retryable ERR_SNAPSHOT_GONE, like a missing one.
 */
async function restorable(ctx: KubeContext, name: string): Promise<EtcdSnapshot> {
  const snapshot = await requireSnapshot(ctx, name);
  if (snapshot.metadata.deletionTimestamp)
    throw new EffectError(
      ERR.SNAPSHOT_GONE,
      `EtcdSnapshot ${ctx.cluster.namespace}/${name} is being deleted, its stored file with it`,
      { retryable: false },
    );
  return snapshot;
}

/** The created (or found) EtcdMember's uid. */
export type CreateMemberResult = { readonly uid: string };

/** Creates the EtcdMember; one of ours already there counts as done (names are never reused). */
export const createMember: IntentHandler<'createMember', CreateMemberResult, KubeContext> = {
  kind: 'createMember',
  async run(params, ctx) {
    const cluster = await readCluster(ctx);
    // A member whose certificates are missing or do not fit could never start: say so first.
    const read = await requireMemberTLS(ctx, cluster, params.member);
    // The seed of a restored cluster (or of a recovery from a snapshot) carries the snapshot its Pod restores from.
    const restore =
      params.restoreFrom !== undefined
        ? sourceOf(await restorable(ctx, params.restoreFrom))
        : params.bootstrap
          ? await restoreSource(ctx, cluster)
          : undefined;
    // The cluster machine may not know the CA digest yet (cert-manager wrote the Secrets since it
    // last read them): the one just read is what the Pod starts with.
    const trust = params.trust ?? read;
    const body = buildEtcdMember(cluster, { ...params, ...(trust !== undefined ? { trust } : {}) }, restore);
    const ref = customRef(ctx, PLURAL.member, params.member);
    const { object } = await createOwned<EtcdMember>({
      what: `EtcdMember ${ctx.cluster.namespace}/${params.member}`,
      code: ERR.CREATE_MEMBER,
      foreign: ERR.CREATE_MEMBER_FOREIGN,
      ownerUid: ctx.cluster.uid,
      create: () =>
        ctx.kube.custom.createNamespacedCustomObject({ ...ref, body }, callOptions(ctx.signal)) as Promise<EtcdMember>,
      read: () => ctx.kube.custom.getNamespacedCustomObject(ref, callOptions(ctx.signal)) as Promise<EtcdMember>,
    });
    return { uid: object.metadata.uid ?? '' };
  },
  async recover(params, ctx): Promise<Recovered<CreateMemberResult>> {
    const member = await readMember(ctx, params.member);
    if (!member || controllerUid(member.metadata) !== ctx.cluster.uid) return { done: false };
    return { done: true, result: { uid: member.metadata.uid ?? '' } };
  },
};
