/**
 * Which Pods stand behind a Service, decided as the EndpointSlice controller and the cluster
 * DNS decide it: the selector matches, the Pod has an IP and is not finished, and it is Ready
 * unless the Service publishes not-ready addresses.
 */
import type { V1Pod, V1Service } from '@kubernetes/client-node';

/** Whether a Pod has an address and has not finished. */
export function isRunning(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return Boolean(pod.status?.podIP) && !pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
}

/** Whether the Pod's Ready condition is True. */
export function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Whether a Service has no cluster address of its own (DNS answers with its Pods). */
export function isHeadless(service: V1Service): boolean {
  return service.spec?.clusterIP === 'None';
}

/** The ClusterIP a Service is reached at (DNATed to its Pods); none when headless or ExternalName. */
export function clusterAddress(service: V1Service): string | undefined {
  const ip = service.spec?.clusterIP;
  if (!ip || isHeadless(service) || service.spec?.type === 'ExternalName') return undefined;
  return ip;
}

/** Whether the Service's selector picks this Pod (a Service without a selector picks none). */
export function selects(service: V1Service, pod: V1Pod): boolean {
  const selector = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  if (service.metadata?.namespace !== pod.metadata?.namespace) return false;
  const labels = pod.metadata?.labels ?? {};
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The Pods a Service sends traffic to and publishes in DNS. */
export function endpointPods(service: V1Service, pods: readonly V1Pod[]): V1Pod[] {
  const notReadyToo = service.spec?.publishNotReadyAddresses === true;
  return pods.filter((p) => selects(service, p) && isRunning(p) && (notReadyToo || isReady(p)));
}

/** Orders objects by namespace then name, so rendered files are stable. */
export function byName<T extends { metadata?: { namespace?: string; name?: string } }>(a: T, b: T): number {
  const ka = `${a.metadata?.namespace ?? ''}/${a.metadata?.name ?? ''}`;
  const kb = `${b.metadata?.namespace ?? ''}/${b.metadata?.name ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
