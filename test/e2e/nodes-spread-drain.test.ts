/**
 * An EtcdCluster on the local cluster's three nodes (node-a, node-b, node-c, one zone each),
 * scheduled by the real kube-scheduler: its three members land on three nodes, each volume
 * belongs to its member's node, and `kubectl drain` of one node at a time, across all three,
 * keeps a quorum the whole time (the operator's PodDisruptionBudget) with no failed write.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { kubectl } from './kube.ts';
import { withManager } from './manager-fixture.ts';
import { Traffic } from './traffic.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('nodes');
const { ns, kube } = env;
const SELECTOR = 'etcd-operator.dev/cluster=demo';
let demo: ClusterUnderTest;
let cordoned: string | undefined;

/** The member Pods not being deleted. */
const memberPods = async (): Promise<V1Pod[]> =>
  (await kube.core.listNamespacedPod({ namespace: ns, labelSelector: SELECTOR })).items.filter(
    (p) => !p.metadata?.deletionTimestamp,
  );

describe.skipIf(!hasNode)('three nodes: members spread, volumes stay, drains keep a quorum', () => {
  env.hooks();
  beforeAll(async () => {
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await demo.create({ replicas: 3 });
    await demo.settled(3);
  });
  afterAll(async () => {
    if (cordoned) await kubectl(['uncordon', cordoned]);
  });

  it('the local cluster has three Ready nodes, each in a zone of its own', async () => {
    const nodes = (await kube.core.listNode()).items.filter((n) => /^node-[abc]$/.test(n.metadata?.name ?? ''));
    const zones = nodes.map((n) => [n.metadata?.name, n.metadata?.labels?.['topology.kubernetes.io/zone']]);
    expect(zones.sort()).toEqual([
      ['node-a', 'zone-a'],
      ['node-b', 'zone-b'],
      ['node-c', 'zone-c'],
    ]);
    for (const n of nodes) expect(n.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('a 3-member cluster lands on three nodes, and each volume belongs to its member node', async () => {
    const pods = await memberPods();
    const nodes = pods.map((p) => p.spec?.nodeName);
    expect(new Set(nodes).size).toBe(3);
    for (const pod of pods) {
      const claim = pod.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName ?? '';
      const pvc = await kube.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: ns });
      expect(pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe(pod.spec?.nodeName);
      const pv = await kube.core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
      const term = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0];
      expect(term).toEqual({ key: 'kubernetes.io/hostname', operator: 'In', values: [pod.spec?.nodeName] });
    }
  });

  it('kubectl drain of each node in turn (then uncordon) never fails a write; each member comes back on its node', async () => {
    const before = new Map((await memberPods()).map((p) => [p.metadata?.name, p.spec?.nodeName]));
    const traffic = new Traffic('drains');
    await traffic.start(kube.core, ns, 'demo');
    try {
      for (const node of ['node-a', 'node-b', 'node-c']) {
        cordoned = node;
        // Only this cluster's Pods: other files' leftovers on the node are not this test's to move.
        const drain = await kubectl(['drain', node, `--pod-selector=${SELECTOR}`, '--timeout=180s']);
        expect(drain.code, drain.stderr).toBe(0);
        expect(drain.stdout).toContain(`node/${node} drained`);
        expect((await memberPods()).filter((p) => p.spec?.nodeName === node && p.status?.phase === 'Running')).toEqual(
          [],
        );
        await kubectl(['uncordon', node], { check: true });
        cordoned = undefined;
        await until('three member Pods ready', async () => {
          const ready = (await memberPods()).filter((p) =>
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
          return ready.length === 3 ? ready : undefined;
        });
        await demo.settled(3);
      }
    } finally {
      const report = await traffic.stop();
      console.log(
        `drains: ${report.acknowledged} writes, ${report.failed.length} failed, longest write ${report.longestStallMs} ms`,
      );
      expect(report.failed).toEqual([]);
      expect(report.lost).toEqual([]);
      expect(report.acknowledged).toBeGreaterThan(5);
    }
    await demo.verify(3);
    const after = new Map((await memberPods()).map((p) => [p.metadata?.name, p.spec?.nodeName]));
    expect(after).toEqual(before);
  });
});
