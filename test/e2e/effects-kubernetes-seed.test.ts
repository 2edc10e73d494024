/**
 * The Kubernetes handlers on the local cluster, as the machines use them for a seed:
 * ensureServices, createMember, createPVC, createPod -> the seed's etcd runs on a node and
 * answers at its DNS name. Each handler is run twice and recovered before and after.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { kubernetesHandlers as h } from '../../effects/kubernetes/index.ts';
import type { KubeContext } from '../../effects/kubernetes/index.ts';
import { peerURL, seedInitialCluster } from '../../machines/policy.ts';
import {
  clientsOf,
  contextFor,
  createCluster,
  createNamespace,
  deleteTestNamespace,
  until,
} from '../effects/kubernetes/e2e-context.ts';

const run = promisify(execFile);
const ns = `effects-seed-${process.pid}`;
const kube = clientsOf(inject('kubeconfig'));
let cluster: EtcdCluster;
const ctx = (): KubeContext => contextFor(kube, cluster);

beforeAll(async () => {
  await createNamespace(kube.core, ns);
  cluster = await createCluster(kube.custom, ns, 'demo');
});

afterAll(async () => {
  await deleteTestNamespace(kube, ns);
});

describe('Kubernetes handlers bring up a seed', () => {
  const seed = 'demo-0';
  const createParams = () => ({
    member: seed,
    ordinal: 0,
    bootstrap: true,
    initialCluster: seedInitialCluster(ctx().cluster, seed),
    version: '3.6.16',
  });

  it('recover says not done before any run', async () => {
    expect(await h.ensureServices.recover({ cluster: 'demo' }, ctx())).toEqual({ done: false });
    expect(await h.createMember.recover(createParams(), ctx())).toEqual({ done: false });
    expect(await h.createPVC.recover({ member: seed }, ctx())).toEqual({ done: false });
    expect(await h.createPod.recover({ member: seed }, ctx())).toEqual({ done: false });
  });

  it('ensureServices twice gives the same two Services, and recover then says done', async () => {
    const first = await h.ensureServices.run({ cluster: 'demo' }, ctx());
    expect(await h.ensureServices.run({ cluster: 'demo' }, ctx())).toEqual(first);
    expect(first).toEqual({ headless: 'demo', client: 'demo-client' });
    expect(await h.ensureServices.recover({ cluster: 'demo' }, ctx())).toEqual({ done: true, result: first });
    const headless = await kube.core.readNamespacedService({ name: 'demo', namespace: ns });
    expect(headless.spec?.clusterIP).toBe('None');
    expect(headless.spec?.publishNotReadyAddresses).toBe(true);
  });

  it('ensureServices puts back a selector someone changed', async () => {
    await kube.core.patchNamespacedService({
      name: 'demo-client',
      namespace: ns,
      body: [{ op: 'replace', path: '/spec/selector', value: { app: 'other' } }],
    });
    await h.ensureServices.run({ cluster: 'demo' }, ctx());
    const client = await kube.core.readNamespacedService({ name: 'demo-client', namespace: ns });
    expect(client.spec?.selector).toMatchObject({ 'etcd-operator.dev/cluster': 'demo' });
  });

  it('createMember, createPVC and createPod twice each do what once does, and recover agrees', async () => {
    const member = await h.createMember.run(createParams(), ctx());
    expect(await h.createMember.run(createParams(), ctx())).toEqual(member);
    expect(await h.createMember.recover(createParams(), ctx())).toEqual({ done: true, result: member });

    const pvc = await h.createPVC.run({ member: seed }, ctx());
    expect(pvc).toEqual({ pvc: 'data-demo-0' });
    expect(await h.createPVC.run({ member: seed }, ctx())).toEqual(pvc);
    expect(await h.createPVC.recover({ member: seed }, ctx())).toEqual({ done: true, result: pvc });

    const pod = await h.createPod.run({ member: seed }, ctx());
    expect(await h.createPod.run({ member: seed }, ctx())).toEqual(pod);
    expect(await h.createPod.recover({ member: seed }, ctx())).toEqual({ done: true, result: pod });
    const stored = await kube.core.readNamespacedPod({ name: seed, namespace: ns });
    expect(stored.metadata?.ownerReferences?.[0]?.uid).toBe(member.uid);
  });

  it.skipIf(!inject('clusterHasNode'))(
    'the seed becomes Ready and answers at <member>.<cluster>.<ns>.svc:2379',
    async () => {
      const ready = await until('the seed Pod Ready', async () => {
        const pod = await kube.core.readNamespacedPod({ name: seed, namespace: ns });
        return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? pod : undefined;
      });
      // The host has no cluster DNS; a Pod does, so a client Pod uses the name: etcd's image's
      // etcdctl writes (an init container), then reads back what it wrote. The name is served once
      // CoreDNS has read the Ready seed's endpoint, a moment after Ready: a write that came first
      // is tried again (OnFailure), as any client would.
      const endpoint = `http://${seed}.demo.${ns}.svc:2379`;
      const etcdctlContainer = (name: string, args: string[]) => ({
        name,
        image: 'quay.io/coreos/etcd:v3.6.16',
        command: ['/usr/local/bin/etcdctl', `--endpoints=${endpoint}`, ...args],
      });
      const client: V1Pod = {
        metadata: { name: 'client', namespace: ns },
        spec: {
          restartPolicy: 'OnFailure',
          initContainers: [etcdctlContainer('put', ['put', 'greeting', 'hello'])],
          containers: [etcdctlContainer('get', ['get', 'greeting', '--print-value-only'])],
        },
      };
      await kube.core.createNamespacedPod({ namespace: ns, body: client });
      const phase = await until('the client Pod done', async () => {
        const p = (await kube.core.readNamespacedPod({ name: 'client', namespace: ns })).status?.phase;
        return p === 'Succeeded' || p === 'Failed' ? p : undefined;
      });
      expect(phase).toBe('Succeeded');
      const read = await kube.core.readNamespacedPodLog({ name: 'client', namespace: ns, container: 'get' });
      expect(read.trim()).toBe('hello');
      // And from the host, by Pod IP: the value the client wrote by name is there.
      const etcdctl = (
        await run(path.join(import.meta.dirname, '..', '..', 'localcluster', 'tools', 'build.sh'), [
          'etcdctl',
          '3.6.16',
        ])
      ).stdout.trim();
      const got = await run(etcdctl, [
        `--endpoints=http://${ready.status?.podIP}:2379`,
        'get',
        'greeting',
        '--print-value-only',
      ]);
      expect(got.stdout.trim()).toBe('hello');
    },
  );

  it.skipIf(!inject('clusterHasNode'))('a learner started by the handlers is Ready as a learner', async () => {
    const seedIP = (await kube.core.readNamespacedPod({ name: seed, namespace: ns })).status?.podIP ?? '';
    const etcdctl = (
      await run(path.join(import.meta.dirname, '..', '..', 'localcluster', 'tools', 'build.sh'), ['etcdctl', '3.6.16'])
    ).stdout.trim();
    const learner = 'demo-1';
    const url = peerURL(ctx().cluster, learner);
    await run(etcdctl, [
      `--endpoints=http://${seedIP}:2379`,
      'member',
      'add',
      learner,
      '--learner',
      `--peer-urls=${url}`,
    ]);
    const initialCluster = `${seedInitialCluster(ctx().cluster, seed)},${learner}=${url}`;
    await h.createMember.run(
      { member: learner, ordinal: 1, bootstrap: false, initialCluster, version: '3.6.16' },
      ctx(),
    );
    await h.createPVC.run({ member: learner }, ctx());
    await h.createPod.run({ member: learner }, ctx());
    await until('the learner Pod Ready', async () => {
      const pod = await kube.core.readNamespacedPod({ name: learner, namespace: ns });
      return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? pod : undefined;
    });
    const list = JSON.parse(
      (await run(etcdctl, [`--endpoints=http://${seedIP}:2379`, 'member', 'list', '-w', 'json'])).stdout,
    ) as { members: { peerURLs: string[]; isLearner?: boolean }[] };
    // By peer URL: etcd may list the learner's name only a moment after it answers.
    expect(list.members.find((m) => m.peerURLs.includes(url))?.isLearner).toBe(true);
  });

  it('deletePod twice stops the seed once, recover agrees, and createPod brings it back once the old Pod is gone', async () => {
    expect(await h.deletePod.recover({ member: seed }, ctx())).toEqual({ done: false });
    expect(await h.deletePod.run({ member: seed }, ctx())).toEqual({});
    expect(await h.deletePod.run({ member: seed }, ctx())).toEqual({});
    expect(await h.deletePod.recover({ member: seed }, ctx())).toEqual({ done: true, result: {} });
    const recreated = await until('createPod after the old Pod went', () => h.createPod.run({ member: seed }, ctx()));
    expect(await h.createPod.recover({ member: seed }, ctx())).toEqual({ done: true, result: recreated });
  });
});
