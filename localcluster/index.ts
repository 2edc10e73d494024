/**
 * The local Kubernetes: the control plane, then (with node) the network, the storage
 * provisioners and the real nodes (realnode/: kubelet, containerd and runc; node-a, node-b,
 * node-c by default, one zone each), each keeping its state in a folder of one dir.
 */
import os from 'node:os';
import path from 'node:path';
import type { CertManager } from './cert-manager/index.ts';
import { startCertManager } from './cert-manager/index.ts';
import type { LocalControlPlane } from './controlplane/index.ts';
import { startControlPlane } from './controlplane/index.ts';
import { startNetwork } from './network/index.ts';
import type { LocalNetwork } from './network/index.ts';
import { shareMounts, startRealNodeServices } from './realnode/cluster.ts';
import { REAL_NODES_DIR } from './realnode/join.ts';
import { asLocalNode } from './realnode/localNode.ts';
import { SIZED_SCOPE, startLocalPath, startStorage } from './storage/index.ts';
import type { Kubectl, LocalNode, Log } from './types.ts';

/** Options of startLocalCluster. */
export interface LocalClusterOptions {
  /** Where every part keeps its state; default `<cache>/run/local-cluster` (see defaultClusterDir). */
  readonly dir?: string;
  /** Start the network, storage and nodes too (the nodes need root); default true. */
  readonly node?: boolean;
  /** How many nodes: node-a, node-b... each in its zone (zone-a...); default 3. */
  readonly nodes?: number;
  /**
   * Start cert-manager (its CRDs and controller); default false. With nodes its controller runs on
   * them, started after them; without, as a process on this machine, after the control plane.
   */
  readonly certManager?: boolean;
  readonly log?: Log;
}

/** A running local cluster. */
export interface LocalCluster {
  readonly dir: string;
  readonly controlPlane: LocalControlPlane;
  readonly kubeconfigPath: string;
  readonly kubectl: Kubectl;
  readonly network?: LocalNetwork;
  /** The first node (node-a). */
  readonly node?: LocalNode;
  /** Every node as first started, in name order; a stopped one is started again with startNode. */
  readonly nodes?: readonly LocalNode[];
  /**
   * Starts again the cluster node `name` after its stop() (as a machine that died boots again:
   * same dir, same Node), and resolves once its agent runs; the cluster's stop() stops it.
   */
  startNode?(name: string): Promise<LocalNode>;
  readonly certManager?: CertManager;
  /**
   * The registry the nodes pull from, as HOST:PORT on the machine (plain HTTP).
   * Nodes pull an image named `HOST:PORT/org/name` (or after any registry not mirrored) from there.
   */
  readonly registryHost?: string;
  /** Stops every part, the last started first. */
  stop(): Promise<void>;
}

/** `$ETCD_OPERATOR_CACHE/run/local-cluster`, the cache defaulting to ~/.cache/etcd-operator as in build.sh. */
export function defaultClusterDir(): string {
  const cache =
    process.env.ETCD_OPERATOR_CACHE ||
    path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'etcd-operator');
  return path.join(cache, 'run', 'local-cluster');
}

/** Starts the local cluster; a restart with the same dir keeps its objects, certificates and volumes. */
export async function startLocalCluster(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
  const dir = path.resolve(opts.dir ?? defaultClusterDir());
  const log = opts.log;
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    const errors: unknown[] = [];
    for (const s of stops.splice(0).reverse()) await s().catch((err: unknown) => errors.push(err));
    if (errors.length) throw new AggregateError(errors, 'some parts of the local cluster did not stop cleanly');
  };
  try {
    const controlPlane = await startControlPlane({ dir: path.join(dir, 'controlplane'), log });
    stops.push(() => controlPlane.stop());
    const { kubeconfigPath } = controlPlane;
    // On the nodes once they run; as a process on this machine only when there are none.
    const withCertManager = async (onNodes: boolean): Promise<CertManager | undefined> => {
      if (!opts.certManager) return undefined;
      const certManager = await startCertManager({ dir: path.join(dir, 'cert-manager'), kubeconfigPath, onNodes, log });
      stops.push(() => certManager.stop());
      return certManager;
    };
    const base = { dir, controlPlane, kubeconfigPath, kubectl: controlPlane.kubectl, stop };
    if (opts.node === false) return { ...base, certManager: await withCertManager(false) };

    // Before the sized class mounts a volume there: real nodes have mount namespaces of their own.
    stops.push(await shareMounts(path.join(dir, 'storage-sized')));
    const network = await startNetwork({ dir: path.join(dir, 'network'), kubeconfigPath, log });
    stops.push(() => network.stop());
    const names = nodeNames(opts.nodes ?? 3);
    // The default class standard, as kind's: local-path-provisioner, a directory per node.
    const localPath = await startLocalPath({ dir: path.join(dir, 'local-path'), kubeconfigPath, nodes: names, log });
    stops.push(() => localPath.stop());
    // Class local-sized: tmpfs volumes whose size a Pod sees, grown in place (local-path cannot grow).
    const sized = await startStorage({ dir: path.join(dir, 'storage-sized'), kubeconfigPath, log }, SIZED_SCOPE);
    stops.push(() => sized.stop());
    const services = await startRealNodeServices({
      dir: path.join(dir, REAL_NODES_DIR),
      controlPlane,
      hostsFile: network.hostsFile,
      log,
    });
    stops.push(() => services.stop());
    // The node now running under each name: the one stop() stops, even after a test's restart.
    const running = new Map<string, LocalNode>();
    stops.push(async () => {
      for (const node of [...running.values()].reverse()) await node.stop();
    });
    const startNode = async (name: string): Promise<LocalNode> => {
      const node = asLocalNode(await services.startNode(name, { [ZONE_LABEL]: zoneOf(name) }));
      running.set(name, node);
      return node;
    };
    const nodes: LocalNode[] = [];
    for (const name of names) nodes.push(await startNode(name));
    const certManager = await withCertManager(true);
    return { ...base, network, node: nodes[0], nodes, startNode, registryHost: services.registryHost, certManager };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/**
 * The node count LOCALCLUSTER_NODES gives (a number), or undefined (unset, or 'real', the kind
 * of node it once chose); throws on anything else.
 */
export function nodeCountFromEnv(): number | undefined {
  const value = process.env.LOCALCLUSTER_NODES ?? '';
  if (value === '' || value === 'real') return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`LOCALCLUSTER_NODES=${value}: neither a count of nodes nor 'real'`);
  return Number(value);
}

const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** The names of n nodes: node-a, node-b... */
export function nodeNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `node-${String.fromCharCode(97 + i)}`);
}

/** The zone label of a cluster node: zone-a for node-a. */
export const zoneOf = (name: string): string => name.replace(/^node-/, 'zone-');
