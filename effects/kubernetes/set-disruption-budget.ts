/**
 * setDisruptionBudget: the cluster's PodDisruptionBudget created or brought to the minAvailable
 * asked for, or deleted when none is asked for (scaled to zero). One that is not ours is never
 * changed: of that name it fails the step; a budget of someone else's goes untouched.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { ERR } from '../../machines/error-codes.ts';
import type { IntentHandler, Recovered } from '../types.ts';
import { callOptions, deleteOrGone, readOrNull } from './_util.ts';
import { buildDisruptionBudget, disruptionBudgetName } from './build-disruption-budget.ts';
import type { KubeContext } from './context.ts';
import { createOwned } from './create-owned.ts';
import { clusterLabels, controllerUid } from './meta.ts';
import { readCluster } from './objects.ts';
import { sameJSON } from './same-json.ts';

/** The minAvailable the budget now has; null: the cluster has none. */
export type SetDisruptionBudgetResult = { readonly minAvailable: number | null };

/** Whether an existing budget already says what the desired one says (labels: ours among its own). */
function current(existing: V1PodDisruptionBudget, desired: V1PodDisruptionBudget): boolean {
  const labels = existing.metadata?.labels ?? {};
  const e = existing.spec ?? {};
  const d = desired.spec ?? {};
  return (
    Object.entries(desired.metadata?.labels ?? {}).every(([k, v]) => labels[k] === v) &&
    e.minAvailable === d.minAvailable &&
    e.maxUnavailable === undefined &&
    sameJSON(e.selector, d.selector)
  );
}

/** The existing budget with our labels, minAvailable and selector; a replace, so nothing else of ours lingers. */
function updated(existing: V1PodDisruptionBudget, desired: V1PodDisruptionBudget): V1PodDisruptionBudget {
  const { maxUnavailable: _, ...spec } = existing.spec ?? {};
  return {
    ...existing,
    metadata: { ...existing.metadata, labels: { ...existing.metadata?.labels, ...desired.metadata?.labels } },
    spec: { ...spec, minAvailable: desired.spec?.minAvailable, selector: desired.spec?.selector },
  };
}

const read = (ctx: KubeContext, name: string): Promise<V1PodDisruptionBudget | null> =>
  readOrNull(ERR.SET_DISRUPTION_BUDGET, `reading PodDisruptionBudget ${name}`, () =>
    ctx.kube.policy.readNamespacedPodDisruptionBudget(
      { name, namespace: ctx.cluster.namespace },
      callOptions(ctx.signal),
    ),
  );

async function ensure(ctx: KubeContext, minAvailable: number): Promise<void> {
  const desired = buildDisruptionBudget(await readCluster(ctx), minAvailable);
  const namespace = ctx.cluster.namespace;
  const name = desired.metadata?.name ?? '';
  await createOwned<V1PodDisruptionBudget>({
    what: `PodDisruptionBudget ${namespace}/${name}`,
    code: ERR.SET_DISRUPTION_BUDGET,
    foreign: ERR.SET_DISRUPTION_BUDGET_FOREIGN,
    ownerUid: ctx.cluster.uid,
    create: () =>
      ctx.kube.policy.createNamespacedPodDisruptionBudget({ namespace, body: desired }, callOptions(ctx.signal)),
    read: () => ctx.kube.policy.readNamespacedPodDisruptionBudget({ name, namespace }, callOptions(ctx.signal)),
    // A replace carries the resourceVersion read: a budget changed since fails with 409 and is retried.
    patch: async (existing) =>
      current(existing, desired)
        ? existing
        : ctx.kube.policy.replaceNamespacedPodDisruptionBudget(
            { name, namespace, body: updated(existing, desired) },
            callOptions(ctx.signal),
          ),
  });
}

async function remove(ctx: KubeContext, name: string): Promise<void> {
  const existing = await read(ctx, name);
  if (!existing || existing.metadata?.deletionTimestamp) return;
  if (controllerUid(existing.metadata) !== ctx.cluster.uid) return;
  // The uid precondition deletes exactly the budget read above, never one made since.
  const body = { preconditions: { uid: existing.metadata?.uid ?? '' } };
  await deleteOrGone(ERR.SET_DISRUPTION_BUDGET, `deleting PodDisruptionBudget ${name}`, () =>
    ctx.kube.policy.deleteNamespacedPodDisruptionBudget(
      { name, namespace: ctx.cluster.namespace, body },
      callOptions(ctx.signal),
    ),
  );
}

/** Creates, updates or deletes the PodDisruptionBudget `<cluster>`. */
export const setDisruptionBudget: IntentHandler<'setDisruptionBudget', SetDisruptionBudgetResult, KubeContext> = {
  kind: 'setDisruptionBudget',
  async run(params, ctx) {
    if (params.minAvailable === null) await remove(ctx, disruptionBudgetName(params.cluster));
    else await ensure(ctx, params.minAvailable);
    return { minAvailable: params.minAvailable };
  },
  async recover(params, ctx): Promise<Recovered<SetDisruptionBudgetResult>> {
    const found = await read(ctx, disruptionBudgetName(params.cluster));
    const ours = found !== null && controllerUid(found.metadata) === ctx.cluster.uid;
    const done =
      params.minAvailable === null
        ? !ours || Boolean(found.metadata?.deletionTimestamp)
        : ours &&
          found.spec?.minAvailable === params.minAvailable &&
          found.spec.maxUnavailable === undefined &&
          sameJSON(found.spec.selector, { matchLabels: clusterLabels(params.cluster) });
    return done ? { done: true, result: { minAvailable: params.minAvailable } } : { done: false };
  },
};
