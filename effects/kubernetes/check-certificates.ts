/**
 * checkCertificates: whether cert-manager has issued every Certificate the operator made for the
 * cluster (its Ready condition True), so the seed is built on Secrets that are there. One not
 * Ready is a "not yet" the cluster machine waits out (a hold, policy.ts), said with the
 * Certificate's name and the reason and message of its Ready condition; only read, never written.
 */
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import { buildCertificates, CERTIFICATES, type Certificate } from './build-certificates.ts';
import type { KubeContext } from './context.ts';
import { readCluster } from './objects.ts';

/** The Certificates found Ready. */
export type CheckCertificatesResult = { readonly ready: readonly string[] };

/** Why a Certificate is not Ready, in cert-manager's own words; null when it is. */
export function notReady(name: string, found: Certificate | null): string | null {
  if (!found) return `Certificate ${name} does not exist`;
  const ready = found.status?.conditions?.find((c) => c.type === 'Ready');
  // A Ready of an older spec (one ensureCertificates just patched back) says nothing of this one.
  const seen = ready?.observedGeneration;
  const stale = seen !== undefined && seen < (found.metadata.generation ?? 0);
  if (ready?.status === 'True' && !stale) return null;
  if (ready?.status === 'True') return `Certificate ${name} is being issued again for its changed spec`;
  if (!ready) return `Certificate ${name} has no Ready condition yet (is cert-manager running?)`;
  return `Certificate ${name} is not Ready (${ready.reason ?? 'no reason'}: ${ready.message ?? 'no message'})`;
}

async function check(ctx: KubeContext): Promise<CheckCertificatesResult> {
  const names = buildCertificates(await readCluster(ctx)).map((c) => c.metadata.name ?? '');
  const problems: string[] = [];
  for (const name of names) {
    const found = await readOrNull(
      ERR.CHECK_CERTIFICATES,
      `reading Certificate ${name}`,
      () =>
        ctx.kube.custom.getNamespacedCustomObject(
          { ...CERTIFICATES, namespace: ctx.cluster.namespace, name },
          callOptions(ctx.signal),
        ) as Promise<Certificate>,
    );
    const problem = notReady(name, found);
    if (problem) problems.push(problem);
  }
  if (problems.length > 0)
    throw new EffectError(
      ERR.CERTIFICATES_NOT_READY,
      `${problems.join('; ')} (kubectl describe certificate -n ${ctx.cluster.namespace})`,
    );
  return { ready: names };
}

/** Waits (by failing with a hold) until every Certificate of the cluster is Ready. */
export const checkCertificates: IntentHandler<'checkCertificates', CheckCertificatesResult, KubeContext> = {
  kind: 'checkCertificates',
  run: (_params, ctx) => check(ctx),
  // Only reads: what a crash interrupted changed nothing, and asking again is the answer.
  async recover(_params, ctx) {
    try {
      return { done: true, result: await check(ctx) };
    } catch {
      return { done: false };
    }
  },
};
