/**
 * The process node against the real API server: etcd Pods with claims become Ready, keep their
 * data across Pod deletion, restart when killed, stop gracefully, and come back with the node.
 * This file runs its own node (pods are pinned to it by nodeName), beside the cluster's.
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalNode } from '../cluster/node/index.ts';
import { etcdPod, isReady, podGone, podWhen } from '../cluster/node/testing.ts';
import { until } from '../until.ts';
import { privateNodeToleration, setUpNode, startTestNode, tearDownNode } from './node-fixture.ts';

const ns = `node-${process.pid}`;
const nodeName = `node-e2e-${process.pid}`;
const root = process.getuid?.() === 0;
let dir: string;
let core: CoreV1Api;
let node: LocalNode;

const start = (): Promise<LocalNode> => startTestNode(dir, nodeName);

describe.runIf(root && inject('clusterHasNode'))('process node', () => {
  beforeAll(async () => {
    ({ dir, core, node } = await setUpNode(ns, nodeName, 'node-e2e-'));
  });
  afterAll(() => tearDownNode({ dir, core, node }, ns, nodeName));

  const create = (body: Parameters<typeof etcdPod>[0]) =>
    core.createNamespacedPod({ namespace: ns, body: etcdPod({ nodeName, ...body }) });
  const etcdctl = (pod: string, ip: string, ...args: string[]) =>
    node.exec(ns, pod, ['/usr/local/bin/etcdctl', `--endpoints=http://${ip}:2379`, ...args]);

  it('an etcd Pod with a claim becomes Ready on its own address and keeps its data when recreated', async () => {
    const claim = {
      metadata: { name: 'data-keep' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    };
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim });
    // The default class waits for the claim's first consumer: kube-scheduler places the Pod (a
    // Pod given a nodeName skips it, and its claim would stay Pending, as on any cluster).
    const keep = (): Promise<V1Pod> => {
      const body = etcdPod({ name: 'keep', claim: 'data-keep' });
      body.spec!.nodeSelector = { 'kubernetes.io/hostname': nodeName };
      body.spec!.tolerations = [privateNodeToleration];
      return core.createNamespacedPod({ namespace: ns, body });
    };
    const created = Date.now();
    await keep();
    const pod = await podWhen(core, ns, 'keep', isReady);
    console.log(`etcd Pod with a claim: create -> Ready in ${Date.now() - created} ms`);
    const ip = pod.status!.podIP!;
    // Its own address on the Pod network's bridge.
    expect(ip).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(pod.status).toMatchObject({ phase: 'Running', hostIP: '127.0.0.1', podIPs: [{ ip }] });
    expect(await etcdctl('keep', ip, 'put', 'greeting', 'hello')).toMatchObject({ code: 0 });

    await core.deleteNamespacedPod({ name: 'keep', namespace: ns });
    await podGone(core, ns, 'keep');
    await keep();
    const again = await podWhen(core, ns, 'keep', isReady);
    const read = await etcdctl('keep', again.status!.podIP!, 'get', 'greeting', '--print-value-only');
    expect(read.stdout.trim()).toBe('hello');
  });

  it("changing a running Pod's etcd image restarts it on the new version with the same data", async () => {
    await create({ name: 'upgrade', version: '3.5.35' });
    const before = await podWhen(core, ns, 'upgrade', isReady);
    const ip = before.status!.podIP!;
    expect(await etcdctl('upgrade', ip, 'put', 'kept', 'across-upgrade')).toMatchObject({ code: 0 });
    before.spec!.containers[0]!.image = 'quay.io/coreos/etcd:v3.6.16';
    await core.replaceNamespacedPod({ name: 'upgrade', namespace: ns, body: before });
    const after = await podWhen(
      core,
      ns,
      'upgrade',
      (p) => isReady(p) && p.status?.containerStatuses?.[0]?.image === 'quay.io/coreos/etcd:v3.6.16',
    );
    expect(after.status!.containerStatuses![0]!.restartCount).toBe(1);
    expect(await (await fetch(`http://${ip}:2379/version`)).json()).toMatchObject({ etcdserver: '3.6.16' });
    expect((await etcdctl('upgrade', ip, 'get', 'kept', '--print-value-only')).stdout.trim()).toBe('across-upgrade');
  });

  it('a killed container restarts, counts the restart, and its logs show both runs (also through kubectl logs --previous)', async () => {
    await create({ name: 'crash' });
    await podWhen(core, ns, 'crash', isReady);
    await node.killContainer(ns, 'crash');
    const pod = await podWhen(
      core,
      ns,
      'crash',
      (p) => isReady(p) && p.status?.containerStatuses?.[0]?.restartCount === 1,
    );
    expect(pod.status!.containerStatuses![0]!.lastState?.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
    const logs = await node.logs(ns, 'crash');
    expect(logs.match(/"msg":"Running: "/g)).toHaveLength(2);
    // The same through the API server (what `kubectl logs [--previous]` reads): one run each.
    const current = await core.readNamespacedPodLog({ name: 'crash', namespace: ns, container: 'etcd' });
    const previous = await core.readNamespacedPodLog({
      name: 'crash',
      namespace: ns,
      container: 'etcd',
      previous: true,
    });
    expect([current.match(/"msg":"Running: "/g)?.length, previous.match(/"msg":"Running: "/g)?.length]).toEqual([1, 1]);
  });

  it('an image the node has no binaries for leaves the container waiting with ErrImagePull', async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'unknown' },
        spec: { nodeName, containers: [{ name: 'main', image: 'busybox:1.36' }] },
      },
    });
    const pod = await podWhen(core, ns, 'unknown', (p) => !!p.status?.containerStatuses?.[0]?.state?.waiting?.message);
    const waiting = pod.status!.containerStatuses![0]!.state!.waiting!;
    expect(['ErrImagePull', 'ImagePullBackOff']).toContain(waiting.reason);
    expect(waiting.message).toContain('failed to pull image "busybox:1.36": this local node has no binaries for it');
    expect(pod.status!.phase).toBe('Pending');
    const events = await until('the Events of Pod unknown', async () => {
      const list = await core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=unknown' });
      return list.items.some((e) => e.reason === 'Failed') ? list.items : undefined;
    });
    expect(events.find((e) => e.reason === 'Failed')).toMatchObject({
      type: 'Warning',
      source: { component: 'kubelet', host: nodeName },
    });
  });

  it('deleting a Pod sends SIGTERM to etcd, which shuts down cleanly, and the Pod object goes', async () => {
    await create({ name: 'graceful' });
    await podWhen(core, ns, 'graceful', isReady);
    await core.deleteNamespacedPod({ name: 'graceful', namespace: ns });
    await podGone(core, ns, 'graceful');
    expect(await node.logs(ns, 'graceful')).toContain('"msg":"received signal; shutting down","signal":"terminated"');
  });

  it('a Pod without a node is bound by the node its nodeSelector names, and runs', async () => {
    const body = etcdPod({ name: 'bind-me' });
    body.spec!.nodeSelector = { 'kubernetes.io/hostname': nodeName };
    body.spec!.tolerations = [privateNodeToleration];
    await core.createNamespacedPod({ namespace: ns, body });
    const pod = await podWhen(core, ns, 'bind-me', isReady);
    expect(pod.spec!.nodeName).toBe(nodeName);
    expect(pod.status!.conditions!.find((c) => c.type === 'PodScheduled')!.status).toBe('True');
  });

  it('a stopped node kills its Pods; a node started again with the same dir runs them again and finishes deletions', async () => {
    await create({ name: 'survivor' });
    await create({ name: 'deleted-while-down' });
    const before = await podWhen(core, ns, 'survivor', isReady);
    await podWhen(core, ns, 'deleted-while-down', isReady);
    await node.stop();
    await core.deleteNamespacedPod({ name: 'deleted-while-down', namespace: ns });
    await until('etcd of the deleted Pod to stop answering', async () => {
      const r = await fetch(`http://${before.status!.podIP!}:2379/health`).catch(() => undefined);
      return r ? undefined : true;
    });
    node = await start();
    const after = await podWhen(
      core,
      ns,
      'survivor',
      (p) => isReady(p) && (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
    );
    expect(after.status!.podIP).toBe(before.status!.podIP);
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    // A Pod deleted while its node was down stays Terminating until the node comes back.
    await podGone(core, ns, 'deleted-while-down');
  });
});
