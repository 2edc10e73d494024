/**
 * ensureServices: the cluster's headless and client Services, created or brought back to what
 * the builders say. The headless one comes first: members' peer URLs are its DNS names.
 */
import type { V1Service } from '@kubernetes/client-node';
import { PatchStrategy } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, readOrNull } from './_util.ts';
import { buildClientService, buildHeadlessService } from './build-services.ts';
import type { KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { controllerUid } from './meta.ts';
import { readCluster } from './objects.ts';
import { sameJSON } from './same-json.ts';

/** The names of the two Services. */
export type EnsureServicesResult = { readonly headless: string; readonly client: string };

/** The fields the operator decides on an existing Service; the rest (clusterIP...) are the server's. */
function drift(existing: V1Service, desired: V1Service): object | null {
  const labels = existing.metadata?.labels ?? {};
  const labelsOk = Object.entries(desired.metadata?.labels ?? {}).every(([k, v]) => labels[k] === v);
  const d = desired.spec ?? {};
  const e = existing.spec ?? {};
  const specOk =
    sameJSON(e.selector, d.selector) &&
    sameJSON(e.ports, d.ports) &&
    (e.publishNotReadyAddresses ?? false) === (d.publishNotReadyAddresses ?? false);
  if (labelsOk && specOk) return null;
  return {
    metadata: { labels: desired.metadata?.labels },
    spec: { selector: d.selector, ports: d.ports, publishNotReadyAddresses: d.publishNotReadyAddresses ?? false },
  };
}

async function ensure(ctx: KubeContext, desired: V1Service): Promise<void> {
  const namespace = ctx.cluster.namespace;
  const name = desired.metadata?.name ?? '';
  await createOwned<V1Service>({
    what: `Service ${namespace}/${name}`,
    code: ERR.ENSURE_SERVICES,
    foreign: ERR.ENSURE_SERVICES_FOREIGN,
    ownerUid: ctx.cluster.uid,
    create: () => ctx.kube.core.createNamespacedService({ namespace, body: desired }, callOptions(ctx.signal)),
    read: () => ctx.kube.core.readNamespacedService({ name, namespace }, callOptions(ctx.signal)),
    patch: async (existing) => {
      const body = drift(existing, desired);
      if (!body) return existing;
      return ctx.kube.core.patchNamespacedService(
        { name, namespace, body },
        callOptions(ctx.signal, PatchStrategy.MergePatch),
      );
    },
  });
}

/** Creates (or repairs) the headless Service `<cluster>` and the client Service `<cluster>-client`. */
export const ensureServices: IntentHandler<'ensureServices', EnsureServicesResult, KubeContext> = {
  kind: 'ensureServices',
  async run(_params, ctx) {
    const cluster = await readCluster(ctx);
    const headless = buildHeadlessService(cluster);
    const client = buildClientService(cluster);
    await ensure(ctx, headless);
    await ensure(ctx, client);
    return { headless: headless.metadata?.name ?? '', client: client.metadata?.name ?? '' };
  },
  async recover(_params, ctx): Promise<Recovered<EnsureServicesResult>> {
    const cluster = await readCluster(ctx);
    const names = [buildHeadlessService(cluster), buildClientService(cluster)].map((s) => s.metadata?.name ?? '');
    for (const name of names) {
      const found = await readOrNull(ERR.ENSURE_SERVICES, `reading Service ${name}`, () =>
        ctx.kube.core.readNamespacedService({ name, namespace: ctx.cluster.namespace }, callOptions(ctx.signal)),
      );
      if (!found || controllerUid(found.metadata) !== ctx.cluster.uid) return { done: false };
    }
    return { done: true, result: { headless: names[0] ?? '', client: names[1] ?? '' } };
  },
};
