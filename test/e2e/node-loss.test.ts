/**
 * A node lost under an EtcdCluster, as when a machine dies: the test runs three nodes of its
 * own (zones a, b, c), tainted so no other file's Pod lands there, and pins the cluster to them,
 * so it can stop one while the other files run on the cluster's own nodes. The node goes NotReady,
 * Kubernetes evicts its Pods once their toleration (10 s here, from the podTemplate) runs out,
 * and the operator replaces the member there with a new one on a live node while the cluster
 * keeps serving; the old member is gone from etcd, and the node, back, runs nothing of it. The
 * clients' recorded history across the loss is checked (test/history/, docs/reliability.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalNode } from '../../localcluster/types.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { withManager } from './manager-fixture.ts';
import { PRIVATE_NODE_TAINT, startOwnNode } from './node-fixture.ts';
import { describeVerdict } from '../history/checker.ts';
import { Traffic, trafficProblems } from './traffic.ts';

const hasNode = inject('clusterHasNode') && process.getuid?.() === 0;
const id = Date.now().toString(36);
const env = withManager('node-loss');
const { ns, kube } = env;
const POOL = 'etcd-operator.dev/e2e-pool';
const names = ['a', 'b', 'c'].map((z) => `loss-${id}-${z}`);
const SELECTOR = 'etcd-operator.dev/cluster=demo';
/** The test's nodes. */
let dir: string;
let demo: ClusterUnderTest;
const nodes = new Map<string, LocalNode>();

/**
 * Starts (or starts again) the test node `name`, labelled with its zone and the pool the cluster
 * is pinned to, and tainted private.
 */
async function start(name: string): Promise<void> {
  const labels = { 'topology.kubernetes.io/zone': `zone-${name.slice(-1)}`, [POOL]: id };
  nodes.set(name, await startOwnNode({ dir: path.join(dir, name), name, labels, taints: [PRIVATE_NODE_TAINT] }));
}

/** The member Pods not being deleted, by member name. */
const memberPods = async (): Promise<Map<string, V1Pod>> => {
  const list = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: SELECTOR });
  return new Map(list.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => [p.metadata?.name ?? '', p]));
};

const nodeReady = async (name: string): Promise<string | undefined> =>
  (await kube.core.readNode({ name })).status?.conditions?.find((c) => c.type === 'Ready')?.status;

describe.skipIf(!hasNode)('a node lost under a 3-member cluster', () => {
  // Registered before the fixture's hooks, so it runs after its teardown (afterAll hooks run as a
  // stack): the namespace's members go first (the manager releases their finalizers, their
  // nodes finish their Pods), then the manager, then the nodes.
  afterAll(async () => {
    for (const [name, node] of nodes) {
      await node.stop();
      await kube.core.deleteNode({ name }).catch(() => undefined);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  env.hooks({ namespaceFirst: true });
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-node-loss-'));
    for (const name of names) await start(name);
    demo = new ClusterUnderTest(kube, ns, 'demo');
    // Kubernetes evicts a Pod from a NotReady or unreachable node after its toleration: 300 s by
    // default, 10 s here so the test takes well under a minute.
    const tolerations = [
      ...['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({
        key,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 10,
      })),
      { key: PRIVATE_NODE_TAINT.key, operator: 'Exists', effect: PRIVATE_NODE_TAINT.effect },
    ];
    await demo.create({ replicas: 3, podTemplate: { spec: { nodeSelector: { [POOL]: id }, tolerations } } });
    await demo.settled(3);
  });

  it('spreads the members over the three nodes', async () => {
    const on = [...(await memberPods()).values()].map((p) => p.spec?.nodeName).sort();
    expect(on).toEqual(names);
  });

  it('a stopped node: writes go on, its member is replaced on a live node and leaves etcd; back, the node runs nothing of it', async () => {
    const before = await demo.verify(3);
    const pods = await memberPods();
    const [lost, pod] = [...pods.entries()].find(([, p]) => p.spec?.nodeName === names[2])!;
    const lostID = before.members.get(lost);
    const claim = pod.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName ?? '';
    const traffic = new Traffic('node-loss', { history: true });
    await traffic.start(kube.core, ns, 'demo');
    try {
      await nodes.get(names[2]!)!.stop();
      nodes.delete(names[2]!);
      await demo.replaced(lost, 3);
      await demo.settled(3);
    } finally {
      const report = await traffic.stop();
      const history = report.history!;
      console.log(
        `node loss: ${report.acknowledged} writes, ${report.failed.length} failed, longest write ${report.longestStallMs} ms; history: ${describeVerdict(history)}`,
      );
      expect(report.failed).toEqual([]);
      expect(report.lost).toEqual([]);
      expect(report.acknowledged).toBeGreaterThan(5);
      expect(trafficProblems(report), describeVerdict(history)).toEqual([]);
      expect(history.checked).toBeGreaterThan(20);
    }
    const after = await demo.verify(3);
    expect([...after.members.values()]).not.toContain(lostID);
    const now = await memberPods();
    expect(now.has(lost)).toBe(false);
    for (const p of now.values()) expect(names.slice(0, 2)).toContain(p.spec?.nodeName);
    // The old Pod was deleted at once (its node could not confirm it), and its claim with it.
    await until(`Pod ${lost} gone`, async () =>
      kube.core.readNamespacedPod({ name: lost, namespace: ns }).then(
        () => undefined,
        () => true,
      ),
    );
    await until(`claim ${claim} gone`, async () =>
      kube.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: ns }).then(
        () => undefined,
        () => true,
      ),
    );

    await start(names[2]!);
    await until('the node Ready again', async () => ((await nodeReady(names[2]!)) === 'True' ? true : undefined));
    await demo.settled(3);
    const back = await demo.verify(3);
    expect([...back.members.values()]).not.toContain(lostID);
    expect((await memberPods()).has(lost)).toBe(false);
  });
});
