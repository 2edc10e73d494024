/**
 * ensureCertificates: the cert-manager Certificates spec.tls asks for (buildCertificates),
 * created owned by the EtcdCluster or patched back when they drift. cert-manager then writes
 * their Secrets; the member check that reads them (requireMemberTLS) is what waits for that.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import { EffectError, type IntentHandler, type Recovered } from '../types.ts';
import { callOptions, isNotFound, readOrNull } from './_util.ts';
import { buildCertificates, CERTIFICATES, type Certificate } from './build-certificates.ts';
import type { KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { controllerUid } from './meta.ts';
import { readCluster } from './objects.ts';
import { sameJSON } from './same-json.ts';

/** The names of the Certificates made (each also names the Secret it writes). */
export type EnsureCertificatesResult = { readonly certificates: readonly string[] };

const ref = (ctx: KubeContext, name: string) => ({ ...CERTIFICATES, namespace: ctx.cluster.namespace, name });

/** The spec fields and labels the operator decides, when an existing Certificate differs in them. */
function drift(existing: Certificate, desired: Certificate): object | null {
  const labels = existing.metadata.labels ?? {};
  const labelsOk = Object.entries(desired.metadata.labels ?? {}).every(([k, v]) => labels[k] === v);
  const spec = existing.spec as unknown as Record<string, unknown>;
  const specOk = Object.entries(desired.spec).every(([k, v]) => sameJSON(spec[k], v));
  return labelsOk && specOk ? null : { metadata: { labels: desired.metadata.labels }, spec: desired.spec };
}

/** A create that found no such API: cert-manager is not installed (or not yet). */
function missingAPI(err: unknown): EffectError {
  return new EffectError(
    ERR.CERT_MANAGER_MISSING,
    `the API server does not serve ${CERTIFICATES.plural}.${CERTIFICATES.group}/${CERTIFICATES.version}: install cert-manager, or use secretRef instead of issuerRef`,
    { cause: err },
  );
}

async function ensure(ctx: KubeContext, desired: Certificate): Promise<void> {
  const name = desired.metadata.name ?? '';
  const at = ref(ctx, name);
  const what = `Certificate ${ctx.cluster.namespace}/${name}`;
  await createOwned<Certificate>({
    what,
    code: ERR.ENSURE_CERTIFICATES,
    foreign: ERR.ENSURE_CERTIFICATES_FOREIGN,
    ownerUid: ctx.cluster.uid,
    create: async () => {
      try {
        const { name: _, ...collection } = at;
        return (await ctx.kube.custom.createNamespacedCustomObject(
          { ...collection, body: desired },
          callOptions(ctx.signal),
        )) as Certificate;
      } catch (err) {
        throw isNotFound(err) ? missingAPI(err) : err;
      }
    },
    read: () => ctx.kube.custom.getNamespacedCustomObject(at, callOptions(ctx.signal)) as Promise<Certificate>,
    patch: async (existing) => {
      const body = drift(existing, desired);
      if (!body) return existing;
      return (await ctx.kube.custom.patchNamespacedCustomObject(
        { ...at, body },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      )) as Certificate;
    },
  });
}

/** Creates (or repairs) the cluster's Certificates; a cluster without an issuer has none, and that is done. */
export const ensureCertificates: IntentHandler<'ensureCertificates', EnsureCertificatesResult, KubeContext> = {
  kind: 'ensureCertificates',
  async run(_params, ctx) {
    const certificates = buildCertificates(await readCluster(ctx));
    for (const c of certificates) await ensure(ctx, c);
    return { certificates: certificates.map((c) => c.metadata.name ?? '') };
  },
  async recover(_params, ctx): Promise<Recovered<EnsureCertificatesResult>> {
    const names = buildCertificates(await readCluster(ctx)).map((c) => c.metadata.name ?? '');
    for (const name of names) {
      const found = await readOrNull(
        ERR.ENSURE_CERTIFICATES,
        `reading Certificate ${name}`,
        () =>
          ctx.kube.custom.getNamespacedCustomObject(ref(ctx, name), callOptions(ctx.signal)) as Promise<Certificate>,
      );
      if (!found || controllerUid(found.metadata) !== ctx.cluster.uid) return { done: false };
    }
    return { done: true, result: { certificates: names } };
  },
};
