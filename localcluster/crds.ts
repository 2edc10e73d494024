/** Installs the chart's CustomResourceDefinitions and waits until the API server serves them. */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kubectl, KubectlResult } from './types.ts';
import { until } from './until.ts';

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
  await untilEstablished(kubectl, dir);
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

interface CrdList {
  readonly items?: readonly {
    readonly metadata?: { readonly name?: string };
    readonly status?: { readonly conditions?: readonly { readonly type?: string; readonly status?: string }[] };
  }[];
}

/**
 * Waits (60 s at most) until every CRD in dir is Established. Not `kubectl wait`: kubectl 1.37's
 * fails at once on a CRD the API server has not yet given any condition ("<nil> is of the type
 * <nil>, expected []interface{}"), which a loaded machine shows just after the apply.
 */
async function untilEstablished(kubectl: Kubectl, dir: string): Promise<void> {
  let state = 'no answer yet';
  await until(
    () => `the CRDs in ${dir} to be Established (${state})`,
    async () => {
      const got = await kubectl(['get', '-f', dir, '-o', 'json']);
      if (got.code !== 0) {
        state = (got.stderr || got.stdout).trim();
        return undefined;
      }
      const pending = ((JSON.parse(got.stdout) as CrdList).items ?? [])
        .filter((crd) => !crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'))
        .map((crd) => crd.metadata?.name ?? '');
      state = `not yet: ${pending.join(', ')}`;
      return pending.length === 0 ? true : undefined;
    },
    60_000,
  ).catch((err: unknown) => {
    throw new CrdInstallError('waiting for the CRDs to be Established', {
      stdout: '',
      stderr: (err as Error).message,
      code: 1,
    });
  });
}
