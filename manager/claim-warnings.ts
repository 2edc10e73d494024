/**
 * Why a member's claim is still Pending, in the words of what tried to bind or provision it: the
 * newest Warning Event on the claim (the PV controller's ProvisioningFailed `storageclass.storage.k8s.io
 * "x" not found`, an external provisioner's failure). Kubernetes says it only in Events, not in the
 * claim's status, so `kubectl describe pvc` shows it and the member's condition would not.
 *
 * Listed (the Warnings on that claim's uid, by field selector) only while the claim is Pending, a
 * read standing for `maxAgeMs`; no watch on Events tells when one comes, so a Pending claim is
 * looked at again then. A read that fails (no right to list Events, the API server away) says
 * nothing new.
 */
import type { CoreV1Event, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { callOptions } from '../effects/kubernetes/_util.ts';
import type { KubeClients } from '../effects/kubernetes/context.ts';
import type { Trouble } from '../machines/types.ts';

/** Lists the Warning Events on one object, by its namespace and uid. */
export type ClaimWarningReader = (namespace: string, uid: string) => Promise<readonly CoreV1Event[]>;

/** When an Event was last seen: a series' last, else its last, else when it was made (ms; 0 unknown). */
const seenAt = (e: CoreV1Event): number =>
  new Date(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? 0).getTime();

/** The newest Warning among `events`, as a reason and message; undefined with none. */
export function newestWarning(events: readonly CoreV1Event[]): Trouble | undefined {
  const newest = events
    .filter((e) => e.type === 'Warning' && e.message)
    .reduce<CoreV1Event | undefined>((a, e) => (a && seenAt(a) >= seenAt(e) ? a : e), undefined);
  return newest && { reason: newest.reason ?? 'Warning', message: newest.message!.trim() };
}

/** The claims' newest Warnings, as last read; a read stands for `maxAgeMs`. */
export class ClaimWarnings {
  readonly #read: ClaimWarningReader;
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  readonly #reads = new Map<string, { readonly at: number; readonly warning: Trouble | undefined }>();

  constructor(read: ClaimWarningReader, options: { now?: () => number; maxAgeMs?: number } = {}) {
    this.#read = read;
    this.#now = options.now ?? Date.now;
    this.#maxAgeMs = options.maxAgeMs ?? 10_000;
  }

  /** `warning`: the Pending claim's newest Warning, if any; `againMs`: when to look again, while it is Pending. */
  async check(
    claim: V1PersistentVolumeClaim | undefined,
  ): Promise<{ readonly warning?: Trouble; readonly againMs?: number }> {
    const uid = claim?.metadata?.uid;
    if (!uid || claim.status?.phase !== 'Pending' || claim.metadata?.deletionTimestamp) return {};
    const now = this.#now();
    let read = this.#reads.get(uid);
    if (!read || now - read.at >= this.#maxAgeMs) {
      try {
        read = { at: now, warning: newestWarning(await this.#read(claim.metadata?.namespace ?? '', uid)) };
        this.#reads.set(uid, read);
      } catch {
        // Nothing new: what was read before, if anything.
      }
    }
    return { ...(read?.warning ? { warning: read.warning } : {}), againMs: this.#maxAgeMs };
  }

  /** Forgets reads older than they may stand (claims bound or gone since, among them). */
  sweep(): void {
    const now = this.#now();
    for (const [uid, read] of this.#reads) if (now - read.at >= this.#maxAgeMs) this.#reads.delete(uid);
  }
}

/** A reader on the core API, each call with a deadline of `timeoutMs`. */
export function claimWarningReader(kube: Pick<KubeClients, 'core'>, timeoutMs: number): ClaimWarningReader {
  return async (namespace, uid) =>
    (
      await kube.core.listNamespacedEvent(
        { namespace, fieldSelector: `involvedObject.uid=${uid},type=Warning` },
        callOptions(AbortSignal.timeout(timeoutMs)),
      )
    ).items;
}
