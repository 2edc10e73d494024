/** The API clients of the local cluster, as `make dev` and the tests make them. */
import type { CoreV1Api } from '@kubernetes/client-node';
import { kubeClients } from '../effects/kubernetes/context.ts';
import type { KubeClients } from '../effects/kubernetes/context.ts';
import { until } from './until.ts';
import { KubeConfig } from '../effects/kubernetes/kube-config.ts';

/** The API clients of a kubeconfig file. */
export function clientsOf(kubeconfig: string): KubeClients & { kc: KubeConfig } {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { ...kubeClients(kc), kc };
}

/** Creates a namespace (with `labels`) and waits for its default ServiceAccount (Pods need it to be admitted). */
export async function createNamespace(core: CoreV1Api, ns: string, labels?: Record<string, string>): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: ns, ...(labels ? { labels } : {}) } } });
  await until(`ServiceAccount default in ${ns}`, () =>
    core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
  );
}
