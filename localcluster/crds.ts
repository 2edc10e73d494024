/** Installs the chart's CustomResourceDefinitions and waits until the API server serves them. */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kubectl, KubectlResult } from './types.ts';

/** The chart's generated CRDs. */
export const crdDir = path.join(import.meta.dirname, '..', 'charts', 'etcd-operator', 'crds');

/** kubectl refused to apply the CRDs, or they did not become Established. */
export class CrdInstallError extends Error {
  override readonly name = 'CrdInstallError';
  readonly code = 'ERR_CRD_INSTALL';
  constructor(step: string, result: KubectlResult) {
    super(`${step} failed (exit ${result.code}): ${(result.stderr || result.stdout).trim()}`);
  }
}

/**
 * Applies every CRD in dir (server-side, so a re-run updates them), waits for Established,
 * then until `kubectl explain` knows each one: the API server publishes a CRD's OpenAPI
 * schema a moment after it is Established, and explain fails until then.
 */
export async function installCrds(kubectl: Kubectl, dir: string = crdDir): Promise<void> {
  const apply = await kubectl(['apply', '--server-side', '--force-conflicts', '-f', dir, '-o', 'name']);
  if (apply.code !== 0) throw new CrdInstallError(`kubectl apply --server-side -f ${dir}`, apply);
  const wait = await kubectl(['wait', '--for=condition=Established', '--timeout=60s', '-f', dir]);
  if (wait.code !== 0) throw new CrdInstallError('waiting for the CRDs to be Established', wait);
  // `customresourcedefinition.apiextensions.k8s.io/etcdclusters.etcd-operator.dev` -> `etcdclusters.etcd-operator.dev`
  const resources = apply.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(line.indexOf('/') + 1));
  for (const resource of resources) {
    for (let attempt = 1; ; attempt++) {
      const explain = await kubectl(['explain', resource]);
      if (explain.code === 0) break;
      if (attempt === 200)
        throw new CrdInstallError(`waiting for the schema of ${resource} (kubectl explain)`, explain);
      await sleep(100);
    }
  }
}
