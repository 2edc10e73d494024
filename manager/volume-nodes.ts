/**
 * Whether a member's claim is tied to a node that no longer exists, so that no Pod of it can run:
 * - bound: its PersistentVolume of local storage names its node in its node affinity
 *   (`kubernetes.io/hostname In [node]`);
 * - Pending: kube-scheduler chose a node for the claim's first Pod (the claim's
 *   `volume.kubernetes.io/selected-node`) and a WaitForFirstConsumer provisioner makes the volume
 *   there first (local-path-provisioner runs a helper Pod on it). The Pod stays unbound meanwhile,
 *   and the scheduler places it on that node only.
 * Once every such Node object is deleted, the member machine waits as nodeLost for the cluster to
 * replace it. A Pod of it bound to the deleted node changes nothing: it never runs (Kubernetes'
 * garbage collector deletes it 40 s or more later).
 *
 * Read (the volume, then its nodes, by name) only while the member's Pod is not running: a Ready
 * member has nothing to ask. A read that fails (no right to read Nodes or volumes, the API server
 * away) says nothing new: what was read before stands, and the member stays as it is.
 */
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { callOptions, isNotFound } from '../effects/kubernetes/_util.ts';
import type { KubeClients } from '../effects/kubernetes/context.ts';

/** The node label a local volume's affinity names its node by. */
const HOSTNAME = 'kubernetes.io/hostname';
/** The claim annotation by which kube-scheduler tells a WaitForFirstConsumer provisioner its node. */
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

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

/** Whether the member's Pod runs: Ready and not going. */
const running = (pod: V1Pod | undefined): boolean =>
  !pod?.metadata?.deletionTimestamp &&
  Boolean(pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));

/** A read and when it was made. */
interface Read<T> {
  readonly at: number;
  readonly value: T;
}

/** The claims' nodes, as last read; a read stands for `maxAgeMs`. */
export class VolumeNodes {
  readonly #read: VolumeNodeReader;
  readonly #now: () => number;
  readonly #maxAgeMs: number;
  readonly #volumes = new Map<string, Read<string[] | undefined>>();
  readonly #nodes = new Map<string, Read<boolean>>();

  constructor(read: VolumeNodeReader, options: { now?: () => number; maxAgeMs?: number } = {}) {
    this.#read = read;
    this.#now = options.now ?? Date.now;
    this.#maxAgeMs = options.maxAgeMs ?? 10_000;
  }

  /**
   * `lost`: the node the claim is tied to (its volume's, or while Pending the one selected for
   * it), when every node it is tied to is gone and the member's Pod does not run. `againMs`: when
   * to look again, while the Pod does not run and the nodes exist (no watch on Nodes tells when
   * one goes).
   */
  async check(
    claim: V1PersistentVolumeClaim | undefined,
    pod: V1Pod | undefined,
  ): Promise<{ readonly lost?: string; readonly againMs?: number }> {
    if (!claim || running(pod)) return {};
    try {
      const nodes = await this.#tiedTo(claim);
      if (!nodes) return {};
      const gone = await Promise.all(nodes.map(async (n) => !(await this.#nodeExists(n))));
      return gone.every(Boolean) ? { lost: nodes[0] } : { againMs: this.#maxAgeMs };
    } catch {
      return { againMs: this.#maxAgeMs };
    }
  }

  /** The nodes the claim may only be used on: its bound volume's, or the node selected while Pending. */
  async #tiedTo(claim: V1PersistentVolumeClaim): Promise<readonly string[] | undefined> {
    const phase = claim.status?.phase;
    const volume = claim.spec?.volumeName;
    if (phase === 'Bound' && volume)
      return this.#cached(this.#volumes, volume, async () => pinnedNodes(await this.#read.volume(volume)));
    const selected = phase === 'Pending' ? claim.metadata?.annotations?.[SELECTED_NODE] : undefined;
    return selected ? [selected] : undefined;
  }

  #nodeExists(name: string): Promise<boolean> {
    return this.#cached(this.#nodes, name, () => this.#read.nodeExists(name));
  }

  /** The read of `key` while it stands, else a new one; a read that fails gives the last one, if any. */
  async #cached<T>(reads: Map<string, Read<T>>, key: string, read: () => Promise<T>): Promise<T> {
    const now = this.#now();
    const before = reads.get(key);
    if (before && now - before.at < this.#maxAgeMs) return before.value;
    try {
      const value = await read();
      reads.set(key, { at: now, value });
      return value;
    } catch (err) {
      if (before) return before.value;
      throw err;
    }
  }

  /** Forgets reads older than they may stand (volumes and nodes of members that went, among them). */
  sweep(): void {
    const now = this.#now();
    for (const reads of [this.#volumes, this.#nodes] as Map<string, Read<unknown>>[])
      for (const [key, read] of reads) if (now - read.at >= this.#maxAgeMs) reads.delete(key);
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
