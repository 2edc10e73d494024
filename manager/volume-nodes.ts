/**
 * Whether a member's claim is bound to a volume pinned to a node that no longer exists: a
 * PersistentVolume of local storage names its node in its node affinity
 * (`kubernetes.io/hostname In [node]`), and once that Node object is deleted, its Pods go too
 * (Kubernetes' garbage collector) and no new Pod using the claim can be scheduled anywhere.
 * The member machine then waits as nodeLost for the cluster to replace it.
 *
 * Read (the volume, then its nodes, by name) only while the member has no Pod on a node: a
 * running member has nothing to ask. A read that fails (no right to read Nodes or volumes, the
 * API server away) says nothing: the member stays as it is, its Pod's own trouble reported.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { callOptions, isNotFound } from '../effects/kubernetes/_util.ts';
import type { KubeClients } from '../effects/kubernetes/context.ts';

/** The node label a local volume's affinity names its node by. */
const HOSTNAME = 'kubernetes.io/hostname';

/** Reads a Node (undefined for NotFound) and a PersistentVolume, by name. */
export interface VolumeNodeReader {
  readonly volume: (name: string) => Promise<V1PersistentVolume>;
  /** Whether the Node exists: false on NotFound; throws on any other failure. */
  readonly nodeExists: (name: string) => Promise<boolean>;
}

/**
 * The nodes a volume may be used on, when its node affinity pins it to named nodes: each term
 * names them by hostname. Undefined when a term says anything else (any node in a zone, say).
 */
export function pinnedNodes(volume: V1PersistentVolume): string[] | undefined {
  const terms = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  if (terms.length === 0) return undefined;
  const nodes: string[] = [];
  for (const term of terms) {
    const byName = (term.matchExpressions ?? []).find((e) => e.key === HOSTNAME && e.operator === 'In');
    if (!byName?.values?.length) return undefined;
    nodes.push(...byName.values);
  }
  return nodes;
}

/** Whether the member's Pod, if any, has a node to run on (it is bound to one and not going). */
const podPlaced = (pod: V1Pod | undefined): boolean => Boolean(pod?.spec?.nodeName && !pod.metadata?.deletionTimestamp);

/** The volumes' nodes, as last read; a read stands for `maxAgeMs`. */
export class VolumeNodes {
  readonly #read: VolumeNodeReader;
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  readonly #reads = new Map<string, { readonly at: number; readonly lost: string | undefined }>();

  constructor(read: VolumeNodeReader, options: { now?: () => number; maxAgeMs?: number } = {}) {
    this.#read = read;
    this.#now = options.now ?? Date.now;
    this.#maxAgeMs = options.maxAgeMs ?? 10_000;
  }

  /**
   * `lost`: the node the claim's volume is pinned to, when every node it may be used on is gone
   * and the member's Pod is not on a node. `againMs`: when to look again, while the Pod has no
   * node and none is known lost (no watch on Nodes tells when one goes).
   */
  async check(
    claim: V1PersistentVolumeClaim | undefined,
    pod: V1Pod | undefined,
  ): Promise<{ readonly lost?: string; readonly againMs?: number }> {
    const volume = claim?.status?.phase === 'Bound' ? claim.spec?.volumeName : undefined;
    if (!volume || podPlaced(pod)) return {};
    const lost = await this.#lost(volume);
    return lost ? { lost } : { againMs: this.#maxAgeMs };
  }

  async #lost(volume: string): Promise<string | undefined> {
    const now = this.#now();
    const before = this.#reads.get(volume);
    if (before && now - before.at < this.#maxAgeMs) return before.lost;
    let lost: string | undefined;
    try {
      const nodes = pinnedNodes(await this.#read.volume(volume));
      const gone = nodes && (await Promise.all(nodes.map(async (n) => !(await this.#read.nodeExists(n)))));
      lost = nodes && gone?.every(Boolean) ? nodes[0] : undefined;
    } catch {
      return before?.lost;
    }
    this.#reads.set(volume, { at: now, lost });
    return lost;
  }

  /** Forgets reads older than they may stand (volumes of members that went, among them). */
  sweep(): void {
    const now = this.#now();
    for (const [volume, read] of this.#reads) if (now - read.at >= this.#maxAgeMs) this.#reads.delete(volume);
  }
}

/** A reader on the core API, each call with a deadline of `timeoutMs`. */
export function volumeNodeReader(kube: Pick<KubeClients, 'core'>, timeoutMs: number): VolumeNodeReader {
  const options = () => callOptions(AbortSignal.timeout(timeoutMs));
  return {
    volume: (name) => kube.core.readPersistentVolume({ name }, options()),
    nodeExists: (name) =>
      kube.core.readNode({ name }, options()).then(
        () => true,
        (err: unknown) => {
          if (isNotFound(err)) return false;
          throw err;
        },
      ),
  };
}
