/**
 * The PodDisruptionBudget of an EtcdCluster on the local cluster, with the manager and the
 * controller manager's disruption controller (which keeps the budget's status, which the
 * Eviction API reads): one member Pod of three may be evicted at a time, a second eviction
 * while that member is down is refused with 429, a single member may not be evicted at all,
 * and a cluster parked at zero has no budget.
 */
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { until, untilGone } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest, type Converged } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('budget');
const { ns, kube } = env;
const KEYS = 20;
const SELECTOR = 'etcd-operator.dev/cluster=demo';
let demo: ClusterUnderTest;
let first: Converged;

/** The budget `demo` as stored, with the status the disruption controller wrote. */
const budget = (): Promise<V1PodDisruptionBudget> =>
  kube.policy.readNamespacedPodDisruptionBudget({ name: 'demo', namespace: ns });

/** Waits until the budget has minAvailable `min` and its status, counted for that spec, allows `allowed`. */
const budgetAllows = (min: number, allowed: number): Promise<V1PodDisruptionBudget> =>
  until(`PodDisruptionBudget demo at minAvailable ${min} allowing ${allowed}`, async () => {
    const b = await budget();
    const counted = b.status?.observedGeneration === b.metadata?.generation;
    return counted && b.spec?.minAvailable === min && b.status?.disruptionsAllowed === allowed ? b : undefined;
  });

/** POST pods/NAME/eviction, as `kubectl drain` does: 201 when the Pod may go, else the API server's status code. */
const evict = (name: string): Promise<number> =>
  kube.core
    .createNamespacedPodEviction({
      name,
      namespace: ns,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } },
    })
    .then(
      () => 201,
      (err: { code?: number }) => err.code ?? 0,
    );

/** The names of the member Pods that are ready and not being deleted. */
const readyPods = async (): Promise<string[]> => {
  const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: SELECTOR });
  return pods.items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((p) => p.metadata?.name ?? '')
    .sort();
};

describe.skipIf(!hasNode)('manager: the PodDisruptionBudget that keeps a quorum through evictions', () => {
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
    first = await demo.verify(3);
    await demo.write('before', KEYS);
  });

  it('a 3-member cluster gets a budget of its own over its member Pods that allows one eviction', async () => {
    const b = await budgetAllows(2, 1);
    const c = await demo.get();
    expect(b.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'EtcdCluster', name: 'demo', uid: c.metadata.uid, controller: true }),
    ]);
    expect(b.spec?.selector).toEqual({
      matchLabels: {
        'app.kubernetes.io/name': 'etcd',
        'app.kubernetes.io/managed-by': 'etcd-operator',
        'etcd-operator.dev/cluster': 'demo',
      },
    });
    // minAvailable, not maxUnavailable: the disruption controller cannot scale an EtcdMember.
    expect(b.spec?.maxUnavailable).toBeUndefined();
    expect(b.status).toMatchObject({ expectedPods: 3, currentHealthy: 3, desiredHealthy: 2 });
  });

  it('evicts one member Pod while all are healthy, and refuses a second (429) while that member is down', async () => {
    const [one, two] = await readyPods();
    expect(await evict(one!)).toBe(201);
    // The first member is down: its Pod is terminating or gone, and no next one is ready yet.
    expect(await readyPods()).not.toContain(one);
    expect(await evict(two!)).toBe(429);
    expect(await readyPods()).toContain(two);
    // The member comes back from its volume, and the budget allows one eviction again.
    await demo.settled(3);
    await budgetAllows(2, 1);
    const after = await demo.verify(3);
    expect([...after.members.entries()].sort()).toEqual([...first.members.entries()].sort());
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  });

  it('scaled to 1, the budget keeps the one member: no eviction may take it', async () => {
    await demo.scale(1);
    await demo.settled(1);
    await budgetAllows(1, 0);
    const [last] = await readyPods();
    expect(await evict(last!)).toBe(429);
    expect(await readyPods()).toEqual([last]);
    expect(await demo.readBack('before', KEYS)).toBe(KEYS);
  });

  it('parked at zero, the cluster has no budget; woken, it has one again', async () => {
    await demo.scale(0);
    await demo.settled(0);
    await untilGone('PodDisruptionBudget demo', budget);
    await demo.scale(1);
    await demo.settled(1);
    await budgetAllows(1, 0);
  });
});
