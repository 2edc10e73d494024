/**
 * forceDeletePod against the real API server, on a node of the test's own that it stops: a
 * member's Pod there, deleted as usual, stays terminating (no kubelet confirms it); the handler
 * removes it at once (grace 0), counts a Pod already gone as done, leaves a new Pod of the same
 * name alone, and its recover tells which of these happened.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { kubernetesHandlers as h } from '../../effects/kubernetes/index.ts';
import type { KubeContext } from '../../effects/kubernetes/index.ts';
import { seedInitialCluster } from '../../machines/policy.ts';
import type { LocalNode } from '../../localcluster/types.ts';
import {
  clientsOf,
  contextFor,
  createCluster,
  createNamespace,
  deleteTestNamespace,
  until,
} from '../effects/kubernetes/e2e-context.ts';
import { startPrivateNode } from './node-fixture.ts';

const hasNode = inject('clusterHasNode') && process.getuid?.() === 0;
const id = Date.now().toString(36);
const ns = `force-delete-${id}`;
const nodeName = `force-delete-${id}`;
const member = 'demo-0';
const kube = clientsOf(inject('kubeconfig'));
let cluster: EtcdCluster;
let memberUid: string;
let dir: string;
let node: LocalNode | undefined;
const ctx = (): KubeContext => contextFor(kube, cluster);

/** A Pod named as the member (owned by it unless `foreign`), bound to the test's node, running etcd on its own data. */
async function createMemberPod(foreign = false): Promise<V1Pod> {
  const owner = { apiVersion: 'etcd-operator.dev/v1alpha1', kind: 'EtcdMember', name: member, uid: memberUid };
  const body: V1Pod = {
    metadata: {
      name: member,
      namespace: ns,
      ...(foreign ? {} : { ownerReferences: [{ ...owner, controller: true }] }),
    },
    spec: {
      nodeName,
      containers: [
        {
          name: 'etcd',
          image: 'quay.io/coreos/etcd:v3.6.16',
          command: ['/usr/local/bin/etcd', '--data-dir=/tmp/force-delete'],
        },
      ],
    },
  };
  return kube.core.createNamespacedPod({ namespace: ns, body });
}

const readPod = (): Promise<V1Pod | undefined> =>
  kube.core.readNamespacedPod({ name: member, namespace: ns }).catch((err: { code?: number }) => {
    if (err.code === 404) return undefined;
    throw err;
  });

describe.skipIf(!hasNode)('forceDeletePod on a stopped node', () => {
  let stuck: V1Pod;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'etcd-operator-force-delete-'));
    await createNamespace(kube.core, ns);
    cluster = await createCluster(kube.custom, ns, 'demo');
    const created = await h.createMember.run(
      {
        member,
        ordinal: 0,
        bootstrap: true,
        initialCluster: seedInitialCluster(ctx().cluster, member),
        version: '3.6.16',
      },
      ctx(),
    );
    memberUid = created.uid;
    node = await startPrivateNode(path.join(dir, 'node'), nodeName);
  });

  afterAll(async () => {
    // No manager runs here to release the member's finalizer: let it go, then the namespace.
    if (cluster) await h.releaseFinalizer.run({ member }, ctx()).catch(() => undefined);
    // Pods on the stopped node would hold the namespace's deletion forever, as they held the test's.
    await kube.core.deleteCollectionNamespacedPod({ namespace: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
    await deleteTestNamespace(kube, ns);
    await node?.stop();
    await kube.core.deleteNode({ name: nodeName }).catch(() => undefined);
    await until(
      'the namespace gone',
      () =>
        kube.core.readNamespace({ name: ns }).then(
          () => undefined,
          () => true,
        ),
      120_000,
    ).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a member Pod deleted on a stopped node stays terminating, and recover says not done', async () => {
    await createMemberPod();
    await until('the member Pod running on the test node', async () => {
      const pod = await readPod();
      return pod?.status?.phase === 'Running' ? pod : undefined;
    });
    await node?.stop();
    node = undefined;
    await kube.core.deleteNamespacedPod({ name: member, namespace: ns });
    // A kubelet would confirm the stop and finish the deletion; with the node down nothing does.
    await new Promise((r) => setTimeout(r, 5_000));
    const pod = await readPod();
    expect(pod?.metadata?.deletionTimestamp).toBeTruthy();
    stuck = pod!;
    const uid = stuck.metadata!.uid!;
    expect(await h.forceDeletePod.recover({ member, uid }, ctx())).toEqual({ done: false });
  });

  it('run removes the terminating Pod at once, and recover then says done', async () => {
    const uid = stuck.metadata!.uid!;
    expect(await h.forceDeletePod.run({ member, uid }, ctx())).toEqual({});
    expect(await readPod()).toBeUndefined();
    expect(await h.forceDeletePod.recover({ member, uid }, ctx())).toEqual({ done: true, result: {} });
  });

  it('run again, with the Pod already gone, is done', async () => {
    const uid = stuck.metadata!.uid!;
    expect(await h.forceDeletePod.run({ member, uid }, ctx())).toEqual({});
    expect(await h.forceDeletePod.recover({ member, uid }, ctx())).toEqual({ done: true, result: {} });
  });

  it('a new Pod of the same name (the replacement) is left alone, and the old uid counts as done', async () => {
    const replacement = await createMemberPod();
    const uid = stuck.metadata!.uid!;
    expect(await h.forceDeletePod.run({ member, uid }, ctx())).toEqual({});
    expect((await readPod())?.metadata?.uid).toBe(replacement.metadata?.uid);
    expect(await h.forceDeletePod.recover({ member, uid }, ctx())).toEqual({ done: true, result: {} });
    expect(await h.forceDeletePod.recover({ member, uid: replacement.metadata!.uid! }, ctx())).toEqual({
      done: false,
    });
  });

  it("a Pod of that name that is not the member's is refused (ERR_DELETE_POD_FOREIGN) and stays", async () => {
    const replacement = (await readPod())!;
    await h.forceDeletePod.run({ member, uid: replacement.metadata!.uid! }, ctx());
    expect(await readPod()).toBeUndefined();
    const foreign = await createMemberPod(true);
    const uid = foreign.metadata!.uid!;
    await expect(h.forceDeletePod.run({ member, uid }, ctx())).rejects.toMatchObject({
      code: 'ERR_DELETE_POD_FOREIGN',
      retryable: false,
    });
    expect((await readPod())?.metadata?.uid).toBe(uid);
    expect(await h.forceDeletePod.recover({ member, uid }, ctx())).toEqual({ done: false });
  });
});
