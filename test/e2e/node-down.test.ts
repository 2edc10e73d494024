/**
 * A node that goes down is seen as a real cluster sees it: its Lease stops being renewed, the
 * node lifecycle controller (kube-controller-manager) marks the Node NotReady and its Pods not
 * Ready; a node started again reports Ready, runs the Pods again and finishes the deletion of a
 * Pod deleted while it was down. About 15 s of waiting.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalNode } from '../../localcluster/types.ts';
import { etcdPod, isReady, podGone, podWhen } from './pods.ts';
import { until } from '../../localcluster/until.ts';
import { setUpNode, startPrivateNode, tearDownNode } from './node-fixture.ts';

const ns = `node-down-${process.pid}`;
const nodeName = `node-down-e2e-${process.pid}`;
let dir: string;
let core: CoreV1Api;
let node: LocalNode;

const start = (): Promise<LocalNode> => startPrivateNode(dir, nodeName);
const nodeReady = async (): Promise<string | undefined> =>
  (await core.readNode({ name: nodeName })).status?.conditions?.find((c) => c.type === 'Ready')?.status;
const readyStatus = (p: V1Pod): string | undefined => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;

describe.runIf(process.getuid?.() === 0 && inject('clusterHasNode'))('a node going down', () => {
  beforeAll(async () => {
    ({ dir, core, node } = await setUpNode(ns, nodeName, 'node-down-e2e-'));
  });
  afterAll(() => tearDownNode({ dir, core, node }, ns, nodeName));

  it('a stopped node turns NotReady with its Pods not Ready; started again, both are Ready and a Pod deleted meanwhile goes', async () => {
    await core.createNamespacedPod({ namespace: ns, body: etcdPod({ name: 'member', nodeName }) });
    await core.createNamespacedPod({ namespace: ns, body: etcdPod({ name: 'deleted-while-down', nodeName }) });
    await podWhen(core, ns, 'member', isReady);
    await podWhen(core, ns, 'deleted-while-down', isReady);
    expect(await nodeReady()).toBe('True');
    await node.stop();
    // The lifecycle controller waits its grace period (12 s here) after the last Lease renewal.
    expect(
      await until(
        'the node Unknown',
        async () => ((await nodeReady()) === 'Unknown' ? 'Unknown' : undefined),
        Infinity,
        1000,
      ),
    ).toBe('Unknown');
    const down = await podWhen(core, ns, 'member', (p) => !isReady(p));
    expect(readyStatus(down)).toBe('False');
    // No kubelet confirms the stop: the Pod stays Terminating until its node is back.
    await core.deleteNamespacedPod({ name: 'deleted-while-down', namespace: ns });
    node = await start();
    expect(await until('the node Ready again', async () => ((await nodeReady()) === 'True' ? 'True' : undefined))).toBe(
      'True',
    );
    const up = await podWhen(core, ns, 'member', isReady);
    expect(up.status!.containerStatuses![0]!.restartCount).toBe(1);
    await podGone(core, ns, 'deleted-while-down');
  });
});
