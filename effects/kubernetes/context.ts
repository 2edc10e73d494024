/** What the Kubernetes handlers get besides their parameters: the API clients of one KubeConfig. */
import { CoreV1Api, CustomObjectsApi, EventsV1Api } from '@kubernetes/client-node';
import type { KubeConfig } from '@kubernetes/client-node';
import type { EffectContext } from '../types.ts';

/** The API clients the handlers use. */
export interface KubeClients {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly events: EventsV1Api;
}

/** EffectContext plus the API clients and who reports Events. */
export interface KubeContext extends EffectContext {
  readonly kube: KubeClients;
  /** events.k8s.io reportingInstance: this manager's identity (Pod name); defaults to 'etcd-operator'. */
  readonly instance?: string;
}

/** The API clients of a KubeConfig. */
export function kubeClients(kc: KubeConfig): KubeClients {
  return { core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi), events: kc.makeApiClient(EventsV1Api) };
}
