/** Events about Pods, as the kubelet and the scheduler post them (`kubectl describe pod` shows them). */
import { randomBytes } from 'node:crypto';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Log } from '../types.ts';

/** Posts one Event about a Pod; never throws, never waits. */
export type RecordEvent = (pod: V1Pod, type: 'Normal' | 'Warning', reason: string, message: string) => void;

/** Identical events within this window are posted once (the kubelet counts them instead). */
const dedupeMs = 60_000;

/** An event recorder for one component on this node; every event also goes to the node's log. */
export function eventRecorder(
  core: CoreV1Api,
  node: string,
  component = 'kubelet',
  log: Log = () => undefined,
): RecordEvent {
  const recent = new Map<string, number>();
  return (pod, type, reason, message) => {
    const m = pod.metadata;
    if (!m?.name || !m.namespace) return;
    const key = `${m.uid}/${reason}/${message}`;
    const now = Date.now();
    if ((recent.get(key) ?? 0) > now - dedupeMs) return;
    recent.set(key, now);
    log(`${component} ${node}: pod ${m.namespace}/${m.name}: ${reason}: ${message}`);
    if (recent.size > 1000) for (const [k, t] of recent) if (t <= now - dedupeMs) recent.delete(k);
    const at = new Date(now);
    const body = {
      metadata: { name: `${m.name}.${randomBytes(8).toString('hex')}`, namespace: m.namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Pod', name: m.name, namespace: m.namespace, uid: m.uid },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component, host: node },
      reportingComponent: component,
      reportingInstance: node,
    };
    void core.createNamespacedEvent({ namespace: m.namespace, body }).catch(() => undefined);
  };
}
