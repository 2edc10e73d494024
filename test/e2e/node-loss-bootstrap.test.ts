/**
 * A node lost while a 3-member cluster bootstraps, as seen in a red run: the seed runs, the
 * second member's Pod is bound to a node that has hung (its kubelet gone, its Lease still
 * renewed, so it looks Ready and is chosen), and that node is then deleted. Kubernetes' garbage
 * collector deletes the orphaned Pod, and every new Pod of that member would stay Pending: its
 * volume is pinned to the deleted node. The operator replaces the learner that never started
 * and the bootstrap goes on to 3 voters on live nodes, the keys written meanwhile all kept.
 *
 * The test runs three nodes of its own (zones a, b, c) and pins the cluster to them. Node c is
 * the one lost: it is stopped before the cluster exists and cordoned, and its Lease renewed by
 * the test; once the seed is placed, a and b are cordoned and c uncordoned, so c is where the
 * second member can only go.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalNode } from '../../localcluster/types.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { cordon as cordonNode, keepLeaseOf } from './hung-node.ts';
import { withManager } from './manager-fixture.ts';
import { startOwnNode } from './node-fixture.ts';

const hasNode = inject('clusterHasNode') && process.getuid?.() === 0;
const id = Date.now().toString(36);
const env = withManager('node-loss-bootstrap');
const { ns, kube } = env;
const POOL = 'etcd-operator.dev/e2e-pool';
const [a, b, c] = ['a', 'b', 'c'].map((z) => `bootloss-${id}-${z}`) as [string, string, string];
const SELECTOR = 'etcd-operator.dev/cluster=demo';
let dir: string;
let demo: ClusterUnderTest;
const nodes = new Map<string, LocalNode>();
/** Stops the renewals of node c's Lease while it hangs. */
let release = (): void => undefined;

/** Marks one of the test's nodes (un)schedulable. */
const cordon = (name: string, unschedulable: boolean) => cordonNode(kube.core, name, unschedulable);

/** The member Pods not being deleted, by member name. */
const memberPods = async (): Promise<Map<string, V1Pod>> => {
  const list = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: SELECTOR });
  return new Map(list.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => [p.metadata?.name ?? '', p]));
};

describe.skipIf(!hasNode)('a node lost under a member joining a bootstrap', () => {
  // Registered before the fixture's hooks, so it runs after its teardown (see node-loss.test.ts).
  afterAll(async () => {
    release();
    for (const node of nodes.values()) await node.stop();
    for (const name of [a, b, c]) await kube.core.deleteNode({ name }).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  env.hooks({ namespaceFirst: true });
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-node-loss-bootstrap-'));
    for (const name of [a, b, c]) {
      const labels = { 'topology.kubernetes.io/zone': `zone-${name.slice(-1)}`, [POOL]: id };
      nodes.set(name, await startOwnNode({ dir: path.join(dir, name), name, labels }));
    }
    // A kubelet registers its Node and takes its Lease after it starts: wait, so that a and b can
    // take Pods and c has a Lease to renew once it hangs.
    for (const name of [a, b, c]) {
      await until(`node ${name} Ready`, async () =>
        (await kube.core.readNode({ name })).status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')
          ? true
          : undefined,
      );
    }
    // Node c hangs: its kubelet and container runtime stop (as its machine dies), its Lease is
    // renewed by the test, so it stays Ready.
    await cordon(c, true);
    await nodes.get(c)!.stop();
    nodes.delete(c);
    release = await keepLeaseOf(kube.kc, c);
    demo = new ClusterUnderTest(kube, ns, 'demo');
  });

  it('the learner on the lost node is replaced, and the cluster reaches Available with 3 voters, every key kept', async () => {
    await demo.create({ replicas: 3, podTemplate: { spec: { nodeSelector: { [POOL]: id } } } });
    const seedNode = await until(
      'the seed demo-0 placed',
      async () => (await memberPods()).get('demo-0')?.spec?.nodeName,
    );
    expect([a, b]).toContain(seedNode);
    // The seed is placed: the next member can only go to the hung node c.
    await cordon(a, true);
    await cordon(b, true);
    await cordon(c, false);
    const lostPod = await until('demo-1 bound to the hung node', async () => {
      const p = (await memberPods()).get('demo-1');
      return p?.spec?.nodeName === c ? p : undefined;
    });
    const claim = lostPod.spec?.volumes?.find((v) => v.persistentVolumeClaim)?.persistentVolumeClaim?.claimName ?? '';
    await demo.write('during-bootstrap', 20);
    // Bootstrapping, its learner never started: then the node is gone for good.
    expect((await demo.get()).status?.observed?.step).toBe('Bootstrapping');
    await cordon(a, false);
    await cordon(b, false);
    release();
    await kube.core.deleteNode({ name: c });

    await demo.replaced('demo-1', 3);
    await demo.settled(3);
    const after = await demo.verify(3);
    expect([...after.members.keys()]).not.toContain('demo-1');
    expect(await demo.readBack('during-bootstrap', 20)).toBe(20);
    for (const p of (await memberPods()).values()) expect([a, b]).toContain(p.spec?.nodeName);
    // The lost member's claim went with it (its volume on the deleted node is no one's).
    await until(`claim ${claim} gone`, async () =>
      kube.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: ns }).then(
        () => undefined,
        () => true,
      ),
    );
  }, 360_000); // the garbage collector takes its time over a deleted node's Pods (40 s and more)
});
