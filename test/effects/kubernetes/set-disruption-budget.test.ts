import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdCluster } from '../../../api/v1alpha1/index.ts';
import { buildDisruptionBudget } from '../../../effects/kubernetes/build-disruption-budget.ts';
import { buildPod } from '../../../effects/kubernetes/build-pod.ts';
import { buildHeadlessService } from '../../../effects/kubernetes/build-services.ts';
import type { KubeContext } from '../../../effects/kubernetes/context.ts';
import { setDisruptionBudget } from '../../../effects/kubernetes/set-disruption-budget.ts';
import type { EffectError } from '../../../effects/types.ts';
import { cluster, member } from './fixtures.ts';

type Budget = V1PodDisruptionBudget;
const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/**
 * The policy API over a map, answering 404, 409 (name taken, stale resourceVersion, uid
 * precondition) as the API server does; the EtcdCluster through the custom objects API.
 * Fake: no API server runs in unit tests (test/e2e/disruption-budget.test.ts uses the real one).
 */
function setup(owner: EtcdCluster = cluster()) {
  const budgets = new Map<string, Budget>();
  const calls: string[] = [];
  let version = 0;
  const stored = (b: Budget): Budget => {
    const copy = structuredClone(b);
    copy.metadata = {
      ...copy.metadata,
      resourceVersion: String(++version),
      uid: copy.metadata?.uid ?? `pdb-${version}`,
    };
    budgets.set(copy.metadata.name ?? '', copy);
    return structuredClone(copy);
  };
  const policy = {
    readNamespacedPodDisruptionBudget: (r: { name: string }) => {
      const b = budgets.get(r.name);
      return b ? Promise.resolve(structuredClone(b)) : Promise.reject(status(404));
    },
    createNamespacedPodDisruptionBudget: (r: { body: Budget }) => {
      calls.push('create');
      return budgets.has(r.body.metadata?.name ?? '') ? Promise.reject(status(409)) : Promise.resolve(stored(r.body));
    },
    replaceNamespacedPodDisruptionBudget: (r: { name: string; body: Budget }) => {
      calls.push('replace');
      const b = budgets.get(r.name);
      if (!b) return Promise.reject(status(404));
      if (b.metadata?.resourceVersion !== r.body.metadata?.resourceVersion) return Promise.reject(status(409));
      return Promise.resolve(stored(r.body));
    },
    deleteNamespacedPodDisruptionBudget: (r: { name: string; body: { preconditions: { uid: string } } }) => {
      calls.push('delete');
      const b = budgets.get(r.name);
      if (!b) return Promise.reject(status(404));
      if (b.metadata?.uid !== r.body.preconditions.uid) return Promise.reject(status(409));
      budgets.delete(r.name);
      return Promise.resolve({});
    },
  };
  const custom = {
    getNamespacedCustomObject: (r: { plural: string; name: string }) =>
      r.plural === 'etcdclusters' && r.name === owner.metadata.name
        ? Promise.resolve(structuredClone(owner))
        : Promise.reject(status(404)),
  };
  const ctx = {
    cluster: { namespace: 'ns', name: 'demo', uid: 'cluster-uid' },
    signal: new AbortController().signal,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    kube: { policy, custom },
  } as unknown as KubeContext;
  return { budgets, calls, ctx };
}

const set = (minAvailable: number | null) => ({ cluster: 'demo', minAvailable });
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: EffectError) => `${e.code} retryable=${String(e.retryable)}`,
  );

describe('PodDisruptionBudget builder', () => {
  it("is named after the cluster, owned by it, and selects exactly its member Pods (the Services' selector)", () => {
    const c = cluster();
    const pdb = buildDisruptionBudget(c, 2);
    expect(pdb.metadata?.name).toBe('demo');
    expect(pdb.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'EtcdCluster', name: 'demo', uid: 'cluster-uid', controller: true }),
    ]);
    expect(pdb.spec).toEqual({ minAvailable: 2, selector: { matchLabels: buildHeadlessService(c).spec?.selector } });
    // Every label it selects by is on a member Pod.
    expect(buildPod(member(c, 1), c).metadata?.labels).toMatchObject(pdb.spec?.selector?.matchLabels ?? { none: '' });
    expect(pdb.spec?.maxUnavailable).toBeUndefined();
  });
});

describe('setDisruptionBudget', () => {
  it('creates the budget once: recover finds it, a repeated run changes nothing', async () => {
    const { budgets, calls, ctx } = setup();
    expect(await setDisruptionBudget.recover(set(2), ctx)).toEqual({ done: false });
    expect(await setDisruptionBudget.run(set(2), ctx)).toEqual({ minAvailable: 2 });
    expect(budgets.get('demo')?.spec?.minAvailable).toBe(2);
    expect(await setDisruptionBudget.recover(set(2), ctx)).toEqual({ done: true, result: { minAvailable: 2 } });
    const version = budgets.get('demo')?.metadata?.resourceVersion;
    expect(await setDisruptionBudget.run(set(2), ctx)).toEqual({ minAvailable: 2 });
    expect(budgets.get('demo')?.metadata?.resourceVersion).toBe(version);
    expect(calls).toEqual(['create', 'create']);
  });

  it('brings ours to the asked minAvailable, dropping a maxUnavailable and keeping labels others added', async () => {
    const { budgets, ctx } = setup();
    await setDisruptionBudget.run(set(2), ctx);
    const edited = budgets.get('demo')!;
    edited.spec = { ...edited.spec, minAvailable: undefined, maxUnavailable: 1 };
    edited.metadata = { ...edited.metadata, labels: { ...edited.metadata?.labels, team: 'a' } };
    expect(await setDisruptionBudget.recover(set(4), ctx)).toEqual({ done: false });
    expect(await setDisruptionBudget.run(set(4), ctx)).toEqual({ minAvailable: 4 });
    const now = budgets.get('demo')!;
    expect(now.spec?.minAvailable).toBe(4);
    expect(now.spec?.maxUnavailable).toBeUndefined();
    expect(now.metadata?.labels).toMatchObject({ team: 'a', 'etcd-operator.dev/cluster': 'demo' });
    expect(await setDisruptionBudget.recover(set(4), ctx)).toEqual({ done: true, result: { minAvailable: 4 } });
    expect(await setDisruptionBudget.recover(set(2), ctx)).toEqual({ done: false });
  });

  it('none asked for (scaled to zero) deletes ours; one already gone counts as done', async () => {
    const { budgets, calls, ctx } = setup();
    await setDisruptionBudget.run(set(2), ctx);
    expect(await setDisruptionBudget.recover(set(null), ctx)).toEqual({ done: false });
    expect(await setDisruptionBudget.run(set(null), ctx)).toEqual({ minAvailable: null });
    expect(budgets.has('demo')).toBe(false);
    expect(await setDisruptionBudget.recover(set(null), ctx)).toEqual({ done: true, result: { minAvailable: null } });
    expect(await setDisruptionBudget.run(set(null), ctx)).toEqual({ minAvailable: null });
    expect(calls.filter((c) => c === 'delete')).toHaveLength(1);
  });

  it('never changes or deletes a budget of that name that is not ours', async () => {
    const { budgets, calls, ctx } = setup();
    const theirs: Budget = { metadata: { name: 'demo', uid: 'theirs' }, spec: { maxUnavailable: 2 } };
    budgets.set('demo', theirs);
    expect(await code(setDisruptionBudget.run(set(2), ctx))).toBe('ERR_SET_DISRUPTION_BUDGET_FOREIGN retryable=false');
    expect(await setDisruptionBudget.recover(set(2), ctx)).toEqual({ done: false });
    // Deleting ours: there is none of ours, so that is done, and theirs stays.
    expect(await setDisruptionBudget.run(set(null), ctx)).toEqual({ minAvailable: null });
    expect(await setDisruptionBudget.recover(set(null), ctx)).toEqual({ done: true, result: { minAvailable: null } });
    expect(budgets.get('demo')).toEqual(theirs);
    expect(calls).toEqual(['create']);
  });

  it('acts for no other incarnation of the cluster, and a budget changed under it is retried', async () => {
    const { ctx } = setup(cluster());
    const stale = { ...ctx, cluster: { ...ctx.cluster, uid: 'deleted-incarnation' } };
    expect(await code(setDisruptionBudget.run(set(2), stale))).toBe('ERR_CLUSTER_GONE retryable=false');

    const { budgets, ctx: ctx2 } = setup();
    await setDisruptionBudget.run(set(2), ctx2);
    const policy = ctx2.kube.policy as unknown as Record<string, (r: { name: string }) => Promise<Budget>>;
    const read = policy.readNamespacedPodDisruptionBudget!;
    // Someone writes between our read and our replace: the replace's resourceVersion is stale (409).
    policy.readNamespacedPodDisruptionBudget = async (r) => {
      const b = await read(r);
      budgets.set('demo', { ...budgets.get('demo')!, metadata: { ...b.metadata, resourceVersion: 'newer' } });
      return b;
    };
    expect(await code(setDisruptionBudget.run(set(4), ctx2))).toBe('ERR_SET_DISRUPTION_BUDGET retryable=true');
  });
});
