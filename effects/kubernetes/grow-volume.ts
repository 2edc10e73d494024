/**
 * growVolume: asks a member's PersistentVolumeClaim for a larger size (a step of a volume
 * expansion). Kubernetes then grows the volume and the file system; the cluster machine waits
 * for the claim's capacity to show it.
 */
import { PatchStrategy, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { apiError, callOptions, httpStatus, messageOf, readOrNull } from './_util.ts';
import { quantityBytes } from './build-etcd-args.ts';
import type { KubeContext } from './context.ts';
import { LABEL, pvcName } from './meta.ts';

/** What growVolume did: whether the claim was patched (false: it asked for as much already, or is gone). */
export type GrowVolumeResult = { readonly patched: boolean };

/** The API server's PersistentVolumeClaimResize admission refuses a claim whose class does not allow expansion. */
const NOT_EXPANDABLE = /must support resize|only dynamically provisioned pvc can be resized/;

const requested = (pvc: V1PersistentVolumeClaim): number => {
  const q = pvc.spec?.resources?.requests?.['storage'];
  return q === undefined ? 0 : quantityBytes(q);
};

/** Why the claim cannot grow, naming its class and what to do. */
export function notExpandable(claim: string, storageClass: string | undefined, size: string): string {
  if (!storageClass)
    return `PersistentVolumeClaim ${claim} cannot grow to ${size}: it names no StorageClass, and only a claim whose StorageClass allows volume expansion can grow`;
  return (
    `PersistentVolumeClaim ${claim} cannot grow to ${size}: StorageClass ${storageClass} does not allow volume expansion. ` +
    `Set allowVolumeExpansion: true on it (kubectl patch storageclass ${storageClass} -p '{"allowVolumeExpansion":true}') if its provisioner can grow volumes`
  );
}

async function readClaim(ctx: KubeContext, name: string): Promise<V1PersistentVolumeClaim | null> {
  return readOrNull(ERR.GROW_VOLUME, `reading PersistentVolumeClaim ${name}`, () =>
    ctx.kube.core.readNamespacedPersistentVolumeClaim(
      { name, namespace: ctx.cluster.namespace },
      callOptions(ctx.signal),
    ),
  );
}

/** Merge-patches spec.resources.requests.storage; a claim already asking for as much counts as done. */
export const growVolume: IntentHandler<'growVolume', GrowVolumeResult, KubeContext> = {
  kind: 'growVolume',
  async run(params, ctx) {
    const name = pvcName(params.member);
    const pvc = await readClaim(ctx, name);
    // Gone: its member is being replaced or removed, and a new member's claim gets the size at birth.
    if (!pvc) return { patched: false };
    if (pvc.metadata?.labels?.[LABEL.member] !== params.member)
      throw new EffectError(ERR.GROW_VOLUME, `PersistentVolumeClaim ${name} is not member ${params.member}'s`, {
        retryable: false,
      });
    if (requested(pvc) >= quantityBytes(params.size)) return { patched: false };
    try {
      await ctx.kube.core.patchNamespacedPersistentVolumeClaim(
        {
          name,
          namespace: ctx.cluster.namespace,
          body: { spec: { resources: { requests: { storage: params.size } } } },
        },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
    } catch (err) {
      if (httpStatus(err) === 403 && NOT_EXPANDABLE.test(messageOf(err)))
        throw new EffectError(
          ERR.VOLUME_EXPANSION_NOT_ALLOWED,
          notExpandable(name, pvc.spec?.storageClassName, params.size),
          { retryable: false, cause: err },
        );
      throw apiError(ERR.GROW_VOLUME, `asking PersistentVolumeClaim ${name} for ${params.size}`, err);
    }
    ctx.log.info({ claim: name, size: params.size }, 'volume claim asked to grow');
    return { patched: true };
  },
  async recover(params, ctx): Promise<Recovered<GrowVolumeResult>> {
    const pvc = await readClaim(ctx, pvcName(params.member));
    if (!pvc) return { done: true, result: { patched: false } };
    return requested(pvc) >= quantityBytes(params.size) ? { done: true, result: { patched: true } } : { done: false };
  },
};
