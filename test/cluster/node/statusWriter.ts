/** Writes a Pod's status when it changed, coalescing bursts, one request at a time. */
import { PatchStrategy, setHeaderOptions, type CoreV1Api, type V1Pod, type V1PodStatus } from '@kubernetes/client-node';
import type { Log } from '../types.ts';
import { statusChanged } from './podStatus.ts';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/**
 * A merge patch of the whole status needs no resourceVersion, so it never conflicts: the node
 * owns the phase, conditions and container statuses it writes (as the kubelet does).
 */
export class StatusWriter {
  pod: V1Pod;
  readonly #core: CoreV1Api;
  readonly #compute: () => V1PodStatus;
  readonly #log: Log;
  #written: V1PodStatus | undefined;
  #pending = false;
  #draining = false;
  #closed = false;

  constructor(core: CoreV1Api, pod: V1Pod, compute: () => V1PodStatus, log: Log) {
    this.#core = core;
    this.pod = pod;
    this.#compute = compute;
    this.#log = log;
  }

  /** Asks for a write of the current status (soon, once, whatever the number of calls). */
  changed(): void {
    if (this.#closed) return;
    this.#pending = true;
    if (this.#draining) return;
    this.#draining = true;
    void this.#drain().finally(() => {
      this.#draining = false;
      if (this.#pending && !this.#closed) this.changed();
    });
  }

  /** Stops writing (the Pod is being deleted or the node stops). */
  close(): void {
    this.#closed = true;
  }

  /** Whether the Pod is gone or another Pod now has its name. */
  async #replaced(): Promise<boolean> {
    const m = this.pod.metadata!;
    const now = await this.#core.readNamespacedPod({ name: m.name!, namespace: m.namespace! }).catch(() => undefined);
    return now?.metadata?.uid !== m.uid;
  }

  async #drain(): Promise<void> {
    while (this.#pending && !this.#closed) {
      this.#pending = false;
      await new Promise((r) => setImmediate(r));
      // Conditions keep their transition times: compute against the last status we wrote.
      const status = this.#compute.call(undefined);
      if (!statusChanged(this.#written, status)) continue;
      const m = this.pod.metadata!;
      if (this.#closed) return;
      try {
        // The uid makes the patch fail (422) on a new Pod of the same name, never overwrite it.
        await this.#core.patchNamespacedPodStatus(
          { name: m.name!, namespace: m.namespace!, body: { metadata: { uid: m.uid }, status } },
          mergePatch,
        );
        this.#written = status;
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404 || (code === 422 && (await this.#replaced()))) return this.close();
        this.#log(`pod ${m.namespace}/${m.name}: status write failed (${code ?? (err as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, 1000));
        this.#pending = true;
      }
    }
  }
}
