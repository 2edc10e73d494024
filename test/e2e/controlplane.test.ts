/** The local control plane behaves like a real cluster's for what the operator and its users do. */
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startControlPlane } from '../../localcluster/controlplane/index.ts';
import { binary, run } from '../../localcluster/controlplane/tools.ts';
import { applyManifest, getJson, kubectl } from './kube.ts';

const ns = `controlplane-${process.pid}`;

interface Owned {
  metadata: { name: string; uid: string; ownerReferences?: { kind: string; uid: string }[] };
}

afterAll(async () => {
  await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
});

describe('local control plane', () => {
  it('reports the Kubernetes release it runs as the server version', async () => {
    // The release the local cluster is configured with (build.sh's K8S_VERSION).
    const release = /Kubernetes (v\S+)/.exec(await run(await binary('kube-apiserver'), ['--version']))?.[1];
    expect(release).toMatch(/^v1\.\d+\.\d+$/);
    const out = await kubectl(['version', '-o', 'json'], { check: true });
    const parsed = JSON.parse(out.stdout) as { serverVersion: { gitVersion: string } };
    expect(parsed.serverVersion.gitVersion).toBe(release);
  });

  it('serves the CRDs: Established, and kubectl explain prints the field descriptions', async () => {
    const crd = await getJson<{ status: { conditions: { type: string; status: string }[] } }>([
      'crd',
      'etcdclusters.etcd-operator.dev',
    ]);
    expect(crd.status.conditions).toContainEqual(expect.objectContaining({ type: 'Established', status: 'True' }));
    const explain = await kubectl(['explain', 'etcdcluster.spec.storage'], { check: true });
    expect(explain.stdout).toContain('KIND:       EtcdCluster');
    expect(explain.stdout).toMatch(/DESCRIPTION:\n\s+\S/);
    expect(explain.stdout).toContain('medium');
  });

  it('gives Services ClusterIPs in the Service range 10.96.0.0/16, the kubernetes Service its first address', async () => {
    const kubernetes = await getJson<{ spec: { clusterIP: string } }>(['service', 'kubernetes', '-n', 'default']);
    expect(kubernetes.spec.clusterIP).toBe('10.96.0.1');
    await kubectl(['create', 'namespace', ns]);
    await kubectl(['-n', ns, 'create', 'service', 'clusterip', 'db', '--tcp=2379:2379'], { check: true });
    const db = await getJson<{ spec: { clusterIP: string } }>(['-n', ns, 'service', 'db']);
    const sixteen = (ip: string): string => ip.split('.').slice(0, 2).join('.');
    expect(sixteen(db.spec.clusterIP)).toBe(sixteen(kubernetes.spec.clusterIP));
  });

  it('deletes a namespace with everything in it (namespace controller)', async () => {
    const doomed = `${ns}-doomed`;
    await kubectl(['create', 'namespace', doomed], { check: true });
    await kubectl(['-n', doomed, 'create', 'configmap', 'settings', '--from-literal=a=b'], { check: true });
    await kubectl(['-n', doomed, 'create', 'secret', 'generic', 'creds', '--from-literal=p=q'], { check: true });
    await kubectl(['-n', doomed, 'create', 'serviceaccount', 'robot'], { check: true });
    await kubectl(['delete', 'namespace', doomed, '--timeout=120s'], { check: true });
    const after = await kubectl(['get', 'namespace', doomed]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain('NotFound');
  });

  it('turns a Deployment into a ReplicaSet and Pods (controller manager)', async () => {
    await kubectl(['create', 'namespace', ns]);
    await applyManifest(deployment(ns, 'web', 2));
    await kubectl(['-n', ns, 'wait', '--for=jsonpath={.status.replicas}=2', 'deployment/web', '--timeout=120s'], {
      check: true,
    });
    const dep = await getJson<Owned>(['-n', ns, 'deployment', 'web']);
    const sets = await getJson<{ items: Owned[] }>(['-n', ns, 'replicasets', '-l', 'app=web']);
    expect(sets.items).toHaveLength(1);
    expect(sets.items[0]?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', uid: dep.metadata.uid });
    const pods = await getJson<{ items: Owned[] }>(['-n', ns, 'pods', '-l', 'app=web']);
    expect(pods.items).toHaveLength(2);
    for (const pod of pods.items) {
      expect(pod.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', uid: sets.items[0]?.metadata.uid });
    }
  });

  it('issues service-account tokens that authenticate, and RBAC refuses them secrets', async () => {
    await kubectl(['create', 'namespace', ns]);
    await kubectl(['-n', ns, 'create', 'serviceaccount', 'reader'], { check: true });
    await kubectl(['-n', ns, 'create', 'role', 'cm-reader', '--verb=list', '--resource=configmaps'], { check: true });
    await kubectl(
      ['-n', ns, 'create', 'rolebinding', 'cm-reader', '--role=cm-reader', `--serviceaccount=${ns}:reader`],
      {
        check: true,
      },
    );
    const token = (await kubectl(['-n', ns, 'create', 'token', 'reader'], { check: true })).stdout.trim();
    const kubeconfig = await tokenKubeconfig(token);
    try {
      const whoami = await kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], {
        kubeconfig,
        check: true,
      });
      expect(whoami.stdout).toBe(`system:serviceaccount:${ns}:reader`);
      const secrets = await kubectl(['-n', ns, 'get', 'secrets'], { kubeconfig });
      expect(secrets.code).not.toBe(0);
      expect(secrets.stderr).toContain('Forbidden');
      const configmaps = await kubectl(['-n', ns, 'get', 'configmaps'], { kubeconfig });
      expect(configmaps.code).toBe(0);
    } finally {
      await rm(path.dirname(kubeconfig), { recursive: true, force: true });
    }
    const canI = await kubectl([
      'auth',
      'can-i',
      'list',
      'secrets',
      '-n',
      ns,
      `--as=system:serviceaccount:${ns}:reader`,
    ]);
    expect(canI.stdout.trim()).toBe('no');
  });

  it('keeps its objects and certificates across a restart with the same dir', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'etcd-operator-restart-'));
    try {
      const first = await startControlPlane({ dir, controllerManager: false });
      const ca = await readFile(first.pki.caCert, 'utf8');
      let uid: string;
      try {
        await first.kubectl(['create', 'configmap', 'survivor', '--from-literal=k=v']);
        uid = (await first.kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.metadata.uid}'])).stdout;
      } finally {
        await first.stop();
      }
      const second = await startControlPlane({ dir, controllerManager: false });
      try {
        expect(second.server).toBe(first.server);
        expect(await readFile(second.pki.caCert, 'utf8')).toBe(ca);
        const got = await second.kubectl(['get', 'configmap', 'survivor', '-o', 'jsonpath={.metadata.uid}:{.data.k}']);
        expect(got.stdout).toBe(`${uid}:v`);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

function deployment(namespace: string, name: string, replicas: number): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${namespace} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers: [{ name: main, image: registry.k8s.io/pause:3.10.1 }]
`;
}

// A kubeconfig with only the token: the admin one also carries a client certificate,
// which the API server would authenticate first.
async function tokenKubeconfig(token: string): Promise<string> {
  const view = await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'], { check: true });
  const config = JSON.parse(view.stdout) as { clusters: { cluster: Record<string, string> }[] };
  const cluster = config.clusters[0]?.cluster ?? {};
  const dir = await mkdtemp(path.join(os.tmpdir(), 'etcd-operator-token-'));
  const file = path.join(dir, 'kubeconfig');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  };
  await writeFile(file, JSON.stringify(doc), { mode: 0o600 });
  return file;
}
