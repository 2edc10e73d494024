/**
 * Reads of the operator's own kinds (EtcdCluster, EtcdMember) through the custom objects API, and
 * of a member's Pod, each with the call's deadline, and the check that the cluster is still the
 * incarnation asked for.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import type { KubeContext } from './context.ts';
import { GROUP, PLURAL, VERSION } from './meta.ts';

/** Coordinates of an object of one of the operator's kinds, for the custom objects API. */
export const customRef = (ctx: KubeContext, plural: string, name: string) =>
  ({ group: GROUP, version: VERSION, namespace: ctx.cluster.namespace, plural, name }) as const;

/** The EtcdMember `name` in the cluster's namespace, or null. */
export async function readMember(ctx: KubeContext, name: string): Promise<EtcdMember | null> {
  return readOrNull(
    ERR.READ_MEMBER,
    `reading EtcdMember ${name}`,
    () =>
      ctx.kube.custom.getNamespacedCustomObject(
        customRef(ctx, PLURAL.member, name),
        callOptions(ctx.signal),
      ) as Promise<EtcdMember>,
  );
}

/** The Pod of member `name` (named as the member) in the cluster's namespace, or null. */
export function readMemberPod(ctx: KubeContext, name: string): Promise<V1Pod | null> {
  return readOrNull(ERR.DELETE_POD, `reading Pod ${name}`, () =>
    ctx.kube.core.readNamespacedPod({ name, namespace: ctx.cluster.namespace }, callOptions(ctx.signal)),
  );
}

/** The EtcdMember `name`; a missing one is a non-retryable ERR_MEMBER_GONE (nothing can bring it back). */
export async function requireMember(ctx: KubeContext, name: string): Promise<EtcdMember> {
  const member = await readMember(ctx, name);
  if (!member)
    throw new EffectError(ERR.MEMBER_GONE, `EtcdMember ${ctx.cluster.namespace}/${name} does not exist`, {
      retryable: false,
    });
  return member;
}

/**
 * The EtcdCluster of the context, checked to be the same incarnation (uid): acting for a
 * deleted cluster on a new one of the same name would be acting on the wrong cluster.
 */
export async function readCluster(ctx: KubeContext): Promise<EtcdCluster> {
  const { namespace, name, uid } = ctx.cluster;
  const cluster = await readOrNull(
    ERR.READ_CLUSTER,
    `reading EtcdCluster ${name}`,
    () =>
      ctx.kube.custom.getNamespacedCustomObject(
        customRef(ctx, PLURAL.cluster, name),
        callOptions(ctx.signal),
      ) as Promise<EtcdCluster>,
  );
  if (!cluster || cluster.metadata.uid !== uid) {
    throw new EffectError(ERR.CLUSTER_GONE, `EtcdCluster ${namespace}/${name} (uid ${uid}) no longer exists`, {
      retryable: false,
    });
  }
  return cluster;
}

/** The EtcdCluster `name` in the context's namespace, whichever incarnation, or null. */
export function readClusterNamed(ctx: KubeContext, name: string): Promise<EtcdCluster | null> {
  return readOrNull(
    ERR.READ_CLUSTER,
    `reading EtcdCluster ${name}`,
    () =>
      ctx.kube.custom.getNamespacedCustomObject(
        customRef(ctx, PLURAL.cluster, name),
        callOptions(ctx.signal),
      ) as Promise<EtcdCluster>,
  );
}

/** The EtcdSnapshot `name` in the context's namespace, or null. */
export function readSnapshot(ctx: KubeContext, name: string): Promise<EtcdSnapshot | null> {
  return readOrNull(
    ERR.READ_SNAPSHOT,
    `reading EtcdSnapshot ${name}`,
    () =>
      ctx.kube.custom.getNamespacedCustomObject(
        customRef(ctx, PLURAL.snapshot, name),
        callOptions(ctx.signal),
      ) as Promise<EtcdSnapshot>,
  );
}

/** The EtcdSnapshot `name` in the context's namespace; a missing one is a non-retryable ERR_SNAPSHOT_GONE. */
export async function requireSnapshot(ctx: KubeContext, name: string): Promise<EtcdSnapshot> {
  const snapshot = await readSnapshot(ctx, name);
  if (!snapshot)
    throw new EffectError(ERR.SNAPSHOT_GONE, `EtcdSnapshot ${ctx.cluster.namespace}/${name} does not exist`, {
      retryable: false,
    });
  return snapshot;
}
