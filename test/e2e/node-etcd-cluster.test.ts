/**
 * Three etcd members in hand-written Pods on the process node find each other by their Pod DNS
 * names (`<hostname>.<subdomain>.<ns>.svc`, from the network's hosts file bind-mounted at
 * /etc/hosts) and form a quorum, as they would in a real cluster.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startNetwork, type LocalNetwork } from '../cluster/network/index.ts';
import { PRIVATE_NODE_TAINT, startNode, type LocalNode } from '../cluster/node/index.ts';
import { createNamespace, deleteNamespace, etcdPod, isReady, podWhen } from '../cluster/node/testing.ts';

const ns = `node-etcd-${process.pid}`;
const nodeName = `node-etcd-e2e-${process.pid}`;
const members = ['m0', 'm1', 'm2'];
let dir: string;
let core: CoreV1Api;
let network: LocalNetwork;
let node: LocalNode;

describe.runIf(process.getuid?.() === 0 && inject('clusterHasNode'))('process node: etcd cluster by hand', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(os.tmpdir(), 'node-etcd-e2e-'));
    const kc = new KubeConfig();
    kc.loadFromFile(inject('kubeconfig'));
    core = kc.makeApiClient(CoreV1Api);
    await createNamespace(core, ns);
    network = await startNetwork({ dir: join(dir, 'network'), kubeconfigPath: inject('kubeconfig') });
    node = await startNode({
      dir: join(dir, 'node'),
      kubeconfigPath: inject('kubeconfig'),
      hostsFile: network.hostsFile,
      name: nodeName,
      taints: [PRIVATE_NODE_TAINT],
    });
  });
  afterAll(async () => {
    if (core) await deleteNamespace(core, ns);
    await node?.stop();
    await core?.deleteNode({ name: nodeName }).catch(() => undefined);
    await network?.stop();
    if (process.env.LOCALCLUSTER_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  });

  it('three members started with a static --initial-cluster of Pod DNS names form a quorum', async () => {
    // publishNotReadyAddresses: peers must resolve before any of them is Ready (no quorum yet).
    const service = {
      metadata: { name: 'members' },
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector: { app: 'members' },
        ports: [
          { name: 'client', port: 2379 },
          { name: 'peer', port: 2380 },
        ],
      },
    };
    await core.createNamespacedService({ namespace: ns, body: service });
    const dns = (m: string) => `${m}.members.${ns}.svc`;
    const initialCluster = members.map((m) => `${m}=http://${dns(m)}:2380`).join(',');
    const started = Date.now();
    for (const name of members) {
      await core.createNamespacedPod({
        namespace: ns,
        body: etcdPod({ name, nodeName, subdomain: 'members', initialCluster, clusterToken: ns }),
      });
    }
    await Promise.all(members.map((m) => podWhen(core, ns, m, isReady)));
    console.log(`three-member etcd by hand: create -> all Ready in ${Date.now() - started} ms`);

    const endpoints = members.map((m) => `http://${dns(m)}:2379`).join(',');
    const health = await node.exec(ns, 'm0', [
      '/usr/local/bin/etcdctl',
      `--endpoints=${endpoints}`,
      'endpoint',
      'health',
    ]);
    expect(health.code, health.stderr).toBe(0);
    for (const m of members) expect(health.stdout + health.stderr).toContain(`http://${dns(m)}:2379 is healthy`);
    const list = await node.exec(ns, 'm1', [
      '/usr/local/bin/etcdctl',
      `--endpoints=http://${dns('m1')}:2379`,
      'member',
      'list',
    ]);
    expect(list.stdout.trim().split('\n')).toHaveLength(3);
  });
});
