/** What the end-to-end tests of the Kubernetes handlers share: a context per call, a cluster object, polling. */
import type { CustomObjectsApi, V1ObjectMeta } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../../api/v1alpha1/index.ts';
import type { KubeClients, KubeContext } from '../../../effects/kubernetes/context.ts';
import { GROUP, PLURAL, VERSION } from '../../../effects/kubernetes/meta.ts';
import type { Log } from '../../../effects/types.ts';

export { clientsOf, createNamespace } from '../../../localcluster/clients.ts';
export { until, untilGone } from '../../../localcluster/until.ts';

const quiet: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** A handler context for `cluster`, with a fresh 30 s deadline each time it is made. */
export function contextFor(kube: KubeClients, cluster: EtcdCluster): KubeContext {
  const { namespace = '', name = '', uid = '' } = cluster.metadata;
  return { cluster: { namespace, name, uid }, signal: AbortSignal.timeout(30_000), log: quiet, kube };
}

/** Creates an EtcdCluster as a user would and returns it as stored (with uid and defaults). */
export async function createCluster(
  custom: CustomObjectsApi,
  ns: string,
  name: string,
  spec: Partial<EtcdCluster['spec']> = {},
): Promise<EtcdCluster> {
  const body = {
    apiVersion: 'etcd-operator.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, namespace: ns },
    spec: { replicas: 1, version: '3.6.16', storage: { size: '64Mi' }, ...spec },
  };
  return (await custom.createNamespacedCustomObject({
    group: 'etcd-operator.dev',
    version: 'v1alpha1',
    namespace: ns,
    plural: 'etcdclusters',
    body,
  })) as EtcdCluster;
}

/**
 * Deletes a test's namespace for good, once nothing acts in it any more (its manager stopped).
 * The operator's objects keep finalizers only a manager releases (an EtcdMember's leave-etcd, an
 * EtcdSnapshot's stored copy, a restore's hold): left to themselves they keep the namespace
 * Terminating to the end of the run, and the namespace controller deletes every kind of its
 * content again and again meanwhile. Session 23 counted 15 to 20 such namespaces late in the
 * cluster group, and the API server at up to 190 requests a second, most of them those deletions.
 * So they are released here, as after uninstalling the operator by hand.
 */
export async function deleteTestNamespace(kube: KubeClients, namespace: string): Promise<void> {
  await kube.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  for (const plural of Object.values(PLURAL)) {
    const ref = { group: GROUP, version: VERSION, namespace, plural };
    const { items } = (await kube.custom.listNamespacedCustomObject(ref).catch(() => ({ items: [] }))) as {
      items: { metadata: V1ObjectMeta }[];
    };
    for (const { metadata } of items)
      if (metadata.finalizers?.length)
        await kube.custom
          .patchNamespacedCustomObject({
            ...ref,
            name: metadata.name ?? '',
            body: [{ op: 'remove', path: '/metadata/finalizers' }],
          })
          .catch(() => undefined);
  }
}
