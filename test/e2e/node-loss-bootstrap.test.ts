/**
 * A node lost while a 3-member cluster bootstraps, as seen in a red run: one member is placed on
 * a node that has hung (its kubelet gone, its Lease still renewed, so it looks Ready and is
 * chosen). With the default class (local-path-provisioner, WaitForFirstConsumer) its claim waits
 * for a helper Pod on that node to make the volume, which never runs, so the member's Pod is never
 * bound; with a class that provisions at once, the Pod is bound there. Then the node is deleted:
 * the claim's selected node (or the volume's) is gone, and no Pod of that member can run. A new
 * cluster starts with all its members at once, so a quorum (the two other members) starts without
 * it; the operator replaces the member that never started, says why, and the cluster goes on to
 * 3 voters on live nodes, the keys written meanwhile all kept.
 *
 * The test runs three nodes of its own (zones a, b, c), tainted so no other file's Pod lands on
 * them (node c looks Ready while it hangs), and pins the cluster to them. Node c is
 * the one lost: it is stopped before the cluster exists and its Lease renewed by the test; the
 * members prefer distinct nodes, so one of them is placed there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pvcName } from '../../effects/kubernetes/meta.ts';
import type { LocalNode } from '../../localcluster/types.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { keepLeaseOf, memberHeldBy } from './hung-node.ts';
import { withManager } from './manager-fixture.ts';
import { PRIVATE_NODE_TAINT, startOwnNode } from './node-fixture.ts';

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

/** The member Pods not being deleted, by member name. */
const memberPods = async (): Promise<Map<string, V1Pod>> => {
  const list = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: SELECTOR });
  return new Map(list.items.filter((p) => !p.metadata?.deletionTimestamp).map((p) => [p.metadata?.name ?? '', p]));
};

describe.skipIf(!hasNode)('a node lost under a member of a new cluster', () => {
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
      nodes.set(name, await startOwnNode({ dir: path.join(dir, name), name, labels, taints: [PRIVATE_NODE_TAINT] }));
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
    await nodes.get(c)!.stop();
    nodes.delete(c);
    release = await keepLeaseOf(kube.kc, c);
    demo = new ClusterUnderTest(kube, ns, 'demo');
  });

  it('the member on the lost node is replaced, and the cluster reaches Available with 3 voters, every key kept', async () => {
    const tolerations = [{ key: PRIVATE_NODE_TAINT.key, operator: 'Exists', effect: PRIVATE_NODE_TAINT.effect }];
    await demo.create({ replicas: 3, podTemplate: { spec: { nodeSelector: { [POOL]: id }, tolerations } } });
    const lost = await until('a member placed on the hung node', () => memberHeldBy(kube.core, ns, 'demo', c));
    const claim = pvcName(lost);
    // The two others started the cluster without it: it answers, and takes writes.
    await until(
      'Available without the member on the hung node',
      async () =>
        (await demo.get()).status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True') || undefined,
    );
    await demo.write('during-bootstrap', 20);
    // Then the node is gone for good.
    release();
    await kube.core.deleteNode({ name: c });

    await demo.replaced(lost, 3);
    // The lost member said why it was replaced, in its Events (kubectl describe etcdmember).
    const said = (await kube.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.involvedObject.kind === 'EtcdMember' && e.involvedObject.name === lost && e.reason === 'NodeLost',
    );
    expect(said.map((e) => e.message)).toContainEqual(
      expect.stringContaining(`its claim is Pending, its volume to be made on node ${c}`),
    );
    await demo.settled(3);
    const after = await demo.verify(3);
    expect([...after.members.keys()]).not.toContain(lost);
    expect(await demo.readBack('during-bootstrap', 20)).toBe(20);
    for (const p of (await memberPods()).values()) expect([a, b]).toContain(p.spec?.nodeName);
    // The lost member's claim went with it.
    await until(`claim ${claim} gone`, async () =>
      kube.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: ns }).then(
        () => undefined,
        () => true,
      ),
    );
  }, 360_000);
});
