/** The scheduler of a one-node cluster: binds every unscheduled Pod it may take to this node. */
import {
  PatchStrategy,
  setHeaderOptions,
  StorageV1Api,
  type CoreV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import type { Log } from '../types.ts';
import { eventRecorder, type RecordEvent } from './events.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** Whether the Pod waits for the default scheduler and has no node yet. */
export function unscheduled(pod: V1Pod): boolean {
  const s = pod.spec;
  return (
    !!s &&
    !s.nodeName &&
    (s.schedulerName ?? 'default-scheduler') === 'default-scheduler' &&
    !pod.metadata?.deletionTimestamp
  );
}

/** Why the Pod cannot go on this node (its nodeSelector), or undefined when it can. */
export function unfit(pod: V1Pod, labels: Readonly<Record<string, string>>): string | undefined {
  const wrong = Object.entries(pod.spec?.nodeSelector ?? {}).filter(([k, v]) => labels[k] !== v);
  return wrong.length
    ? `0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector (${wrong.map(([k, v]) => `${k}=${v}`).join(', ')}).`
    : undefined;
}

/** Binds Pods to one node; affinity, anti-affinity and taints are not weighed (one node only). */
export class Scheduler {
  readonly #core: CoreV1Api;
  readonly #storage: StorageV1Api;
  readonly #node: string;
  readonly #labels: Readonly<Record<string, string>>;
  readonly #log: Log;
  readonly #inFlight = new Set<string>();
  readonly #event: RecordEvent;

  constructor(kc: KubeConfig, core: CoreV1Api, node: string, labels: Readonly<Record<string, string>>, log: Log) {
    this.#core = core;
    this.#storage = kc.makeApiClient(StorageV1Api);
    this.#node = node;
    this.#labels = labels;
    this.#log = log;
    this.#event = eventRecorder(core, node, 'default-scheduler', log);
  }

  /** Binds the Pod when it fits, else marks it Unschedulable as kube-scheduler would. */
  async schedule(pod: V1Pod): Promise<void> {
    const m = pod.metadata!;
    const key = m.uid!;
    if (this.#inFlight.has(key)) return;
    this.#inFlight.add(key);
    try {
      const why = unfit(pod, this.#labels);
      // A Pod pinned to another node by hostname is that node's to bind (tests run several).
      const host = pod.spec?.nodeSelector?.['kubernetes.io/hostname'];
      if (why && host && host !== this.#node) return;
      if (why) {
        const condition = {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: why,
          lastTransitionTime: new Date(),
        };
        await this.#core.patchNamespacedPodStatus(
          {
            name: m.name!,
            namespace: m.namespace!,
            body: { metadata: { uid: m.uid }, status: { phase: 'Pending', conditions: [condition] } },
          },
          mergePatch,
        );
        this.#event(pod, 'Warning', 'FailedScheduling', why);
        return;
      }
      await this.#selectNodeForClaims(pod);
      const target = { apiVersion: 'v1', kind: 'Node', name: this.#node };
      await this.#core.createNamespacedPodBinding({
        name: m.name!,
        namespace: m.namespace!,
        body: { metadata: { name: m.name!, namespace: m.namespace!, uid: m.uid }, target },
      });
      this.#event(pod, 'Normal', 'Scheduled', `Successfully assigned ${m.namespace}/${m.name} to ${this.#node}`);
    } catch (err) {
      const code = (err as { code?: number }).code;
      // 409: bound (or replaced) meanwhile; 404: deleted meanwhile. Else retried on the next event.
      if (code !== 409 && code !== 404)
        this.#log(`scheduler: binding ${m.namespace}/${m.name} failed: ${(err as Error).message}`);
    } finally {
      this.#inFlight.delete(key);
    }
  }

  /** Claims of a WaitForFirstConsumer class get the selected-node annotation kube-scheduler sets. */
  async #selectNodeForClaims(pod: V1Pod): Promise<void> {
    const ns = pod.metadata!.namespace!;
    for (const v of pod.spec?.volumes ?? []) {
      if (!v.persistentVolumeClaim) continue;
      const pvc = await this.#core
        .readNamespacedPersistentVolumeClaim({ name: v.persistentVolumeClaim.claimName, namespace: ns })
        .catch(() => undefined);
      if (!pvc || pvc.status?.phase === 'Bound' || !pvc.spec?.storageClassName) continue;
      const sc = await this.#storage.readStorageClass({ name: pvc.spec.storageClassName }).catch(() => undefined);
      if (sc?.volumeBindingMode !== 'WaitForFirstConsumer') continue;
      const body = { metadata: { annotations: { 'volume.kubernetes.io/selected-node': this.#node } } };
      await this.#core.patchNamespacedPersistentVolumeClaim(
        { name: pvc.metadata!.name!, namespace: ns, body },
        mergePatch,
      );
    }
  }
}
