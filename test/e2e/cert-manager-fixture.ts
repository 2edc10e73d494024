/**
 * cert-manager for a test file: the one controller test/e2e/setup.ts started with the cluster
 * (shared by every file, so they may run at once), or, on a cluster given by
 * LOCALCLUSTER_KUBECONFIG, one of the file's own (on its nodes, or on this machine without).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { certManagerLogLines, startCertManager } from '../../localcluster/cert-manager/index.ts';

/** The controller a file uses: its last log lines for a failure's message, and stop (its own only). */
export interface CertManagerInUse {
  lastLines(): Promise<string[]>;
  stop(): Promise<void>;
}

/** The cluster's cert-manager, or a new one when the cluster runs none of setup's. */
export async function useCertManager(): Promise<CertManagerInUse> {
  const shared = inject('certManagerLog');
  const kubeconfigPath = inject('kubeconfig');
  if (shared) return { lastLines: () => certManagerLogLines(shared, kubeconfigPath), stop: () => Promise.resolve() };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-cert-manager-'));
  const own = await startCertManager({ dir, kubeconfigPath, onNodes: inject('clusterHasNode') });
  return {
    lastLines: () => own.lastLines(),
    stop: async () => {
      await own.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
