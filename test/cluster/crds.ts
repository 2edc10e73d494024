/** Installs the chart's CustomResourceDefinitions and waits until the API server serves them. */
import path from 'node:path';
import type { Kubectl, KubectlResult } from './types.ts';

/** The chart's generated CRDs. */
export const crdDir = path.join(import.meta.dirname, '..', '..', 'charts', 'etcd-operator', 'crds');

/** kubectl refused to apply the CRDs, or they did not become Established. */
export class CrdInstallError extends Error {
  override readonly name = 'CrdInstallError';
  readonly code = 'ERR_CRD_INSTALL';
  constructor(step: string, result: KubectlResult) {
    super(`${step} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim()}`);
  }
}

/** Applies every CRD in dir (server-side, so a re-run updates them) and waits for Established. */
export async function installCrds(kubectl: Kubectl, dir: string = crdDir): Promise<void> {
  const apply = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', dir]);
  if (apply.code !== 0) throw new CrdInstallError(`kubectl apply --server-side -f ${dir}`, apply);
  const wait = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', dir]);
  if (wait.code !== 0) throw new CrdInstallError('waiting for the CRDs to be Established', wait);
}
