/** Pod status from what the node knows of its containers: phase, conditions, container statuses. */
import type { V1ContainerState, V1ContainerStatus, V1Pod, V1PodCondition, V1PodStatus } from '@kubernetes/client-node';

/** State of one container as the node tracks it. */
export interface ContainerRuntime {
  readonly name: string;
  image: string;
  restartCount: number;
  state: V1ContainerState;
  lastState?: V1ContainerState;
  ready: boolean;
  started: boolean;
  containerID?: string;
}

/** State of one Pod as the node tracks it. */
export interface PodRuntime {
  podIP?: string;
  readonly hostIP: string;
  startTime?: Date;
  readonly init: ContainerRuntime[];
  readonly containers: ContainerRuntime[];
  initialized: boolean;
}

/** A container not started yet, waiting for a reason. */
export function waiting(name: string, image: string, reason = 'ContainerCreating', message?: string): ContainerRuntime {
  return {
    name,
    image,
    restartCount: 0,
    state: { waiting: { reason, ...(message ? { message } : {}) } },
    ready: false,
    started: false,
  };
}

/** The phase a kubelet would report for these containers under this restart policy. */
export function podPhase(pod: V1Pod, rt: PodRuntime): string {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  if (!rt.initialized) {
    const failed = rt.init.some((c) => (c.state.terminated?.exitCode ?? 0) !== 0);
    return failed && policy === 'Never' ? 'Failed' : 'Pending';
  }
  const cs = rt.containers;
  const terminated = cs.filter((c) => c.state.terminated);
  if (terminated.length === cs.length && cs.length > 0) {
    const failed = terminated.some((c) => c.state.terminated!.exitCode !== 0);
    if (policy === 'Never') return failed ? 'Failed' : 'Succeeded';
    if (policy === 'OnFailure' && !failed) return 'Succeeded';
  }
  const ran = cs.some((c) => c.state.running || c.state.terminated || c.restartCount > 0 || c.lastState?.terminated);
  return ran ? 'Running' : 'Pending';
}

function condition(
  prev: V1PodStatus | undefined,
  type: string,
  ok: boolean,
  reason?: string,
  message?: string,
): V1PodCondition {
  const old = prev?.conditions?.find((c) => c.type === type);
  const status = ok ? 'True' : 'False';
  const since = old && old.status === status && old.lastTransitionTime ? old.lastTransitionTime : new Date();
  return { type, status, lastTransitionTime: since, ...(reason ? { reason } : {}), ...(message ? { message } : {}) };
}

function containerStatus(c: ContainerRuntime): V1ContainerStatus {
  return {
    name: c.name,
    image: c.image,
    imageID: '',
    ready: c.ready,
    started: c.started,
    restartCount: c.restartCount,
    state: c.state,
    lastState: c.lastState ?? {},
    ...(c.containerID ? { containerID: c.containerID } : {}),
  };
}

/** The full status to write, keeping transition times of conditions that did not change. */
export function podStatus(pod: V1Pod, rt: PodRuntime): V1PodStatus {
  const prev = pod.status;
  const phase = podPhase(pod, rt);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const unready = rt.containers.filter((c) => !c.ready).map((c) => c.name);
  const incomplete = rt.init.filter((c) => c.state.terminated?.exitCode !== 0).map((c) => c.name);
  const containersReady = rt.initialized && unready.length === 0;
  const whyNotReady = done ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMsg = `containers with unready status: [${unready.join(' ')}]`;
  const conditions = [
    condition(prev, 'PodReadyToStartContainers', !!rt.podIP && !done),
    condition(
      prev,
      'Initialized',
      rt.initialized,
      rt.initialized ? undefined : 'ContainersNotInitialized',
      rt.initialized ? undefined : `containers with incomplete status: [${incomplete.join(' ')}]`,
    ),
    condition(
      prev,
      'Ready',
      containersReady,
      containersReady ? undefined : whyNotReady,
      containersReady ? undefined : notReadyMsg,
    ),
    condition(
      prev,
      'ContainersReady',
      containersReady,
      containersReady ? undefined : whyNotReady,
      containersReady ? undefined : notReadyMsg,
    ),
    condition(prev, 'PodScheduled', true),
  ];
  return {
    phase,
    conditions,
    hostIP: rt.hostIP,
    hostIPs: [{ ip: rt.hostIP }],
    ...(rt.podIP ? { podIP: rt.podIP, podIPs: [{ ip: rt.podIP }] } : {}),
    ...(rt.startTime ? { startTime: rt.startTime } : {}),
    qosClass: prev?.qosClass ?? 'BestEffort',
    ...(rt.init.length ? { initContainerStatuses: rt.init.map(containerStatus) } : {}),
    containerStatuses: rt.containers.map(containerStatus),
  };
}

/** Whether two statuses differ in anything but timestamps of unchanged conditions. */
export function statusChanged(a: V1PodStatus | undefined, b: V1PodStatus): boolean {
  const strip = (s: V1PodStatus | undefined): string =>
    JSON.stringify(s ?? {}, (k, v: unknown) =>
      k === 'lastProbeTime' ? undefined : v instanceof Date ? v.toISOString() : v,
    );
  return strip(a) !== strip(b);
}
