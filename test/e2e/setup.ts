/**
 * globalSetup of the `cluster` and `cluster-serial` test projects: starts the local Kubernetes
 * (with cert-manager) once in a fresh temp dir (or uses the one LOCALCLUSTER_KUBECONFIG points
 * to), installs the CRDs, hands the kubeconfig, kubectl and cert-manager's log to the tests with
 * `inject`, and stops everything afterwards.
 *
 * Env: LOCALCLUSTER_KUBECONFIG (use a running cluster, e.g. from `make cluster`),
 * LOCALCLUSTER_NODE=0 (no network, storage and nodes; they are skipped anyway when not root),
 * LOCALCLUSTER_KEEP=1 (leave the temp dir, with every log, after the run), LOCALCLUSTER_REGISTRY
 * (with LOCALCLUSTER_KUBECONFIG: the HOST:PORT of the registry that cluster's real nodes pull from).
 */
import { appendFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import type { CertManagerLog } from '../../localcluster/cert-manager/index.ts';
import { kubectlFor, kubectlPath } from '../../localcluster/controlplane/index.ts';
import { installCrds } from '../../localcluster/crds.ts';
import { startLocalCluster } from '../../localcluster/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the local cluster the tests run against. */
    kubeconfig: string;
    /** The pinned kubectl. */
    kubectlPath: string;
    /** Whether the nodes run (Pods start) or only the control plane (Pods stay Pending). */
    clusterHasNode: boolean;
    /** Where the cluster's cert-manager controller logs (null when a given cluster runs its own). */
    certManagerLog: CertManagerLog | null;
    /** The registry the nodes pull from as HOST:PORT on this machine (plain HTTP); '' without nodes. */
    registryHost: string;
    /** The lock dir that keeps cluster-serial's files one at a time (test/e2e/one-at-a-time.ts). */
    serialLock: string;
  }
}

/** What setup() hands to a project: the kubeconfig, and whether Pods start. */
interface Shared {
  readonly kubeconfig: string;
  readonly hasNode: boolean;
  readonly certManagerLog: CertManagerLog | null;
  readonly registryHost: string;
}

/** A started (or joined) local cluster and how to stop it. */
interface Started {
  readonly shared: Shared;
  readonly stop: () => Promise<void>;
}

// Two projects (`cluster` and `cluster-serial`) name this file; both run in the one vitest
// process, and the second joins the cluster the first started instead of starting another.
const STARTED = Symbol.for('etcd-operator.e2e.localCluster');
type WithStarted = typeof globalThis & { [STARTED]?: Promise<Started> };

/** Starts (or joins) the local cluster; the returned function stops what was started. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const kubectlBin = await kubectlPath();
  project.provide('kubectlPath', kubectlBin);
  const g = globalThis as WithStarted;
  const first = !g[STARTED];
  g[STARTED] ??= start(kubectlBin);
  const { shared, stop } = await g[STARTED];
  project.provide('kubeconfig', shared.kubeconfig);
  project.provide('clusterHasNode', shared.hasNode);
  project.provide('certManagerLog', shared.certManagerLog);
  project.provide('registryHost', shared.registryHost);
  // One path for this vitest process (both projects run in it); made only while a file holds it.
  const serialLock = path.join(os.tmpdir(), `etcd-operator-serial-${process.pid}`);
  project.provide('serialLock', serialLock);
  if (!first) return () => Promise.resolve();
  return async () => {
    await stop();
    await rm(serialLock, { recursive: true, force: true });
  };
}

/** The cluster LOCALCLUSTER_KUBECONFIG names (CRDs installed), or a new one in a temp dir. */
async function start(kubectlBin: string): Promise<Started> {
  const given = process.env.LOCALCLUSTER_KUBECONFIG;
  if (given) {
    await installCrds(kubectlFor(given, kubectlBin));
    return {
      shared: {
        kubeconfig: path.resolve(given),
        hasNode: process.env.LOCALCLUSTER_NODE !== '0',
        certManagerLog: null,
        registryHost: process.env.LOCALCLUSTER_REGISTRY ?? '',
      },
      stop: () => Promise.resolve(),
    };
  }

  const dir = await mkdtemp(path.join(os.tmpdir(), 'etcd-operator-e2e-'));
  const node = process.env.LOCALCLUSTER_NODE !== '0' && process.getuid?.() === 0;
  const logFile = path.join(dir, 'cluster.log');
  const started = Date.now();
  // cert-manager too: one controller serves every file that needs it (two would both act on each
  // Certificate), so those files can run beside the others. On the nodes, its Pod's log is kept in
  // <dir>/cert-manager/cert-manager.log when the cluster stops (LOCALCLUSTER_KEEP=1 keeps it).
  const log = (line: string): void => appendFileSync(logFile, line + '\n');
  const cluster = await startLocalCluster({ dir, node, certManager: true, log }).catch((err: unknown) => {
    throw new Error(`the local cluster did not start; logs in ${dir}`, { cause: err });
  });
  try {
    await installCrds(cluster.kubectl);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  console.log(
    `local cluster ready in ${Date.now() - started} ms (${node ? 'with nodes' : 'without nodes'}), ` +
      `Services in ${cluster.controlPlane.serviceRange.cidr}, cert-manager ${cluster.certManager!.version} ` +
      `on the ${cluster.certManager!.runsOn} (${JSON.stringify(cluster.certManager!.timings)} ms), dir ${dir}`,
  );
  return {
    shared: {
      kubeconfig: cluster.kubeconfigPath,
      hasNode: node,
      certManagerLog: cluster.certManager!.log,
      registryHost: cluster.registryHost ?? '',
    },
    stop: async () => {
      await cluster.stop();
      if (process.env.LOCALCLUSTER_KEEP !== '1') await rm(dir, { recursive: true, force: true });
    },
  };
}
