/** What the end-to-end tests of the Kubernetes handlers share: a context per call, a cluster object, polling. */
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../../api/v1alpha1/index.ts';
import type { KubeClients, KubeContext } from '../../../effects/kubernetes/context.ts';
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
