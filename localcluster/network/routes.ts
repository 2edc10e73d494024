/**
 * Where each Service port is DNATed to: the Pods the Service selects (what the EndpointSlice
 * controller would list, read from Pods directly), the EndpointSlices of a Service without a
 * selector, and the API server for `default/kubernetes`.
 */
import type { V1EndpointSlice, V1Pod, V1Service, V1ServicePort } from '@kubernetes/client-node';
import { byName, clusterAddress, endpointPods } from './selection.ts';

/** An address and port connections are DNATed to. */
export interface Target {
  readonly ip: string;
  readonly port: number;
}

/** One ClusterIP and port, and where its connections go. */
export interface Route {
  /** `namespace/name:port`, for logs. */
  readonly service: string;
  readonly ip: string;
  readonly port: number;
  readonly targets: readonly Target[];
}

/** What routes are computed from. */
export interface RoutesInput {
  readonly services: readonly V1Service[];
  readonly pods: readonly V1Pod[];
  readonly slices: readonly V1EndpointSlice[];
  /** host and port of the API server, the backend of `default/kubernetes`. */
  readonly apiServer: Target;
}

/** Every TCP route of every Service that has a ClusterIP. */
export function routes(input: RoutesInput): Route[] {
  const out: Route[] = [];
  for (const service of [...input.services].sort(byName)) {
    const ip = clusterAddress(service);
    if (!ip) continue;
    const ns = service.metadata?.namespace ?? '';
    const name = service.metadata?.name ?? '';
    for (const sp of service.spec?.ports ?? []) {
      if ((sp.protocol ?? 'TCP') !== 'TCP') continue;
      out.push({ service: `${ns}/${name}:${sp.port}`, ip, port: sp.port, targets: targets(service, sp, input) });
    }
  }
  return out;
}

function targets(service: V1Service, sp: V1ServicePort, input: RoutesInput): Target[] {
  const ns = service.metadata?.namespace;
  const name = service.metadata?.name;
  if (ns === 'default' && name === 'kubernetes') return [input.apiServer];
  if (service.spec?.selector && Object.keys(service.spec.selector).length > 0) {
    return endpointPods(service, input.pods)
      .sort(byName)
      .flatMap((pod) => {
        const port = podPort(pod, sp);
        return port === undefined ? [] : [{ ip: pod.status?.podIP ?? '', port }];
      });
  }
  return input.slices
    .filter((s) => s.metadata?.namespace === ns && s.metadata?.labels?.['kubernetes.io/service-name'] === name)
    .flatMap((slice) => {
      const port = slice.ports?.find((p) => (p.name ?? '') === (sp.name ?? ''))?.port;
      if (port === undefined) return [];
      return (slice.endpoints ?? [])
        .filter((e) => e.conditions?.ready !== false)
        .flatMap((e) => e.addresses.map((ip) => ({ ip, port })));
    });
}

/** The Pod port a Service port targets: a number, a named container port, or the same port. */
export function podPort(pod: V1Pod, sp: V1ServicePort): number | undefined {
  const target = sp.targetPort;
  if (target === undefined || target === '') return sp.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod.spec?.containers ?? []) {
    const found = c.ports?.find((p) => p.name === target && (p.protocol ?? 'TCP') === 'TCP');
    if (found) return found.containerPort;
  }
  return undefined;
}
