/**
 * A real node joining a running local cluster, from any process: the cluster's own nodes, a node
 * a test file starts (and stops, and starts again) in its vitest worker, the crash sweep's. What a
 * node needs is in the cluster's dir, written once by the cluster's real-node services
 * (cluster.ts): the control plane's CA and API server port, and containerd's registry hosts. The
 * DNS and registry addresses are fixed (routes.ts), and the machine's table already forwards for
 * every node's veth.
 *
 * Each node name claims an index (its addresses, routes.ts addressing) once, as a file created
 * exclusively under `realnodes/indexes`, so a name started again comes back on the same addresses
 * and two processes never take one index.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { V1Taint } from '@kubernetes/client-node';
import type { Log } from '../types.ts';
import { startRealNode } from './node.ts';
import type { RealNode } from './node.ts';
import { CLUSTER_DNS } from './routes.ts';

/** The real nodes' dir inside a local cluster's dir (beside `controlplane/`). */
export const REAL_NODES_DIR = 'realnodes';
const JOIN_FILE = 'join.json';

/** What a node needs to join the cluster, written by the cluster's real-node services. */
export interface JoinInfo {
  readonly pkiDir: string;
  readonly caCert: string;
  readonly apiserverPort: number;
  readonly registryHostsDir: string;
}

/** Writes the join file of the real nodes' dir `dir`. */
export async function writeJoinInfo(dir: string, info: JoinInfo): Promise<void> {
  await writeFile(path.join(dir, JOIN_FILE), JSON.stringify(info, null, 2) + '\n');
}

/**
 * The real nodes' dir of the cluster whose admin kubeconfig this is (`<cluster>/controlplane/`),
 * or undefined when the cluster runs no real nodes.
 */
export function realNodesDirOf(kubeconfigPath: string): string | undefined {
  const dir = path.join(path.dirname(path.dirname(path.resolve(kubeconfigPath))), REAL_NODES_DIR);
  return existsSync(path.join(dir, JOIN_FILE)) ? dir : undefined;
}

/** Options of joinRealNode. */
export interface JoinOptions {
  /** The cluster's real nodes' dir (realNodesDirOf). */
  readonly nodesDir: string;
  readonly name: string;
  /** The node's own dir (its disk); default `<nodesDir>/<name>`. */
  readonly dir?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly V1Taint[];
  readonly log?: Log;
}

/** Starts (or, after its stop, starts again) the real node `name` in the cluster. */
export async function joinRealNode(opts: JoinOptions): Promise<RealNode> {
  const info = JSON.parse(await readFile(path.join(opts.nodesDir, JOIN_FILE), 'utf8')) as JoinInfo;
  return startRealNode({
    dir: opts.dir ?? path.join(opts.nodesDir, opts.name),
    name: opts.name,
    index: await claimIndex(path.join(opts.nodesDir, 'indexes'), opts.name),
    pki: { dir: info.pkiDir, caCert: info.caCert },
    apiserverPort: info.apiserverPort,
    labels: opts.labels,
    taints: opts.taints,
    clusterDNS: CLUSTER_DNS,
    registryHostsDir: info.registryHostsDir,
    log: opts.log,
  });
}

/** The index `name` claimed before, else the lowest free one, claimed now (a file `<index>` holding the name). */
export async function claimIndex(dir: string, name: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  for (const f of readdirSync(dir)) {
    if (readFileSync(path.join(dir, f), 'utf8') === name) return Number(f);
  }
  for (let index = 1; index <= 250; index++) {
    try {
      await writeFile(path.join(dir, String(index)), name, { flag: 'wx' });
      return index;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`no node index left in ${dir} (250 nodes)`);
}
