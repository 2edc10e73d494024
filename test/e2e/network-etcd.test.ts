/**
 * The whole local cluster under a real etcd: three members run as Pods by the nodes,
 * find each other by the names the cluster DNS gives them, keep data on provisioned volumes,
 * and a member cut off with isolate() falls behind until heal().
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startIsolator } from '../../localcluster/network/index.ts';
import type { Isolator } from '../../localcluster/network/index.ts';
import { applyManifest } from './kube.ts';
import { until } from '../../localcluster/until.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

const run = promisify(execFile);
const VERSION = '3.6.16';
const ns = `etcd-net-${process.pid}`;
const members = ['etcd-0', 'etcd-1', 'etcd-2'];
let core: CoreV1Api;
let isolator: Isolator;
let etcdctlPath: string;
let dir: string;

/** etcdctl from the host (which isolation leaves connected) against one member's address. */
async function etcdctl(ip: string, ...args: string[]): Promise<{ ok: boolean; out: string }> {
  const endpoint = `http://${ip}:2379`;
  return run(etcdctlPath, ['--endpoints', endpoint, '--command-timeout=2s', '--dial-timeout=2s', ...args]).then(
    (r) => ({ ok: true, out: r.stdout.trim() }),
    (err: { stderr?: string }) => ({ ok: false, out: err.stderr ?? '' }),
  );
}

function manifest(): string {
  const peers = members.map((m) => `${m}=http://${m}.etcd.${ns}.svc:2380`).join(',');
  const service = `apiVersion: v1
kind: Service
metadata: { name: etcd, namespace: ${ns} }
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: { app: etcd-net }
  ports: [{ name: client, port: 2379 }, { name: peer, port: 2380 }]
`;
  const pods = members.map(
    (m) => `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: { name: data-${m}, namespace: ${ns} }
spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 64Mi } } }
---
apiVersion: v1
kind: Pod
metadata: { name: ${m}, namespace: ${ns}, labels: { app: etcd-net } }
spec:
  hostname: ${m}
  subdomain: etcd
  volumes: [{ name: data, persistentVolumeClaim: { claimName: data-${m} } }]
  containers:
  - name: etcd
    image: quay.io/coreos/etcd:v${VERSION}
    env: [{ name: POD_IP, valueFrom: { fieldRef: { fieldPath: status.podIP } } }]
    volumeMounts: [{ name: data, mountPath: /var/lib/etcd }]
    command:
    - etcd
    - --name=${m}
    - --data-dir=/var/lib/etcd/data
    - --listen-client-urls=http://$(POD_IP):2379
    - --listen-peer-urls=http://$(POD_IP):2380
    - --advertise-client-urls=http://${m}.etcd.${ns}.svc:2379
    - --initial-advertise-peer-urls=http://${m}.etcd.${ns}.svc:2380
    - --initial-cluster=${peers}
    - --initial-cluster-state=new
`,
  );
  return service + pods.join('');
}

async function podIP(name: string): Promise<string> {
  return until(
    `Pod ${name} has an IP`,
    async () => (await core.readNamespacedPod({ name, namespace: ns })).status?.podIP || undefined,
  );
}

beforeAll(async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  core = kc.makeApiClient(CoreV1Api);
  const buildSh = path.join(import.meta.dirname, '..', '..', 'localcluster', 'tools', 'build.sh');
  etcdctlPath = (await run(buildSh, ['etcdctl', VERSION])).stdout.trim();
  // isolate() from this worker: the cluster's network runs in the global setup's process.
  dir = await mkdtemp(path.join(os.tmpdir(), 'e2e-etcd-net-'));
  isolator = await startIsolator({ dir, kubeconfigPath: inject('kubeconfig') });
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await until(`ServiceAccount default in ${ns}`, () =>
    core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
  );
});

afterAll(async () => {
  await core?.deleteNamespace({ name: ns }).catch(() => undefined);
  await isolator?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!inject('clusterHasNode'))('etcd on the local cluster', () => {
  it('three members find each other by name, and an isolated one falls behind until healed', async () => {
    const started = performance.now();
    await applyManifest(manifest());
    const ips = await Promise.all(members.map(podIP));
    for (const ip of ips)
      await until(`etcd at ${ip} healthy`, async () =>
        (await etcdctl(ip, 'endpoint', 'health')).ok ? true : undefined,
      );
    console.log(`etcd: 3 members healthy ${Math.round(performance.now() - started)} ms after apply`);
    const [isolated, other] = [ips[2] ?? '', ips[0] ?? ''];
    expect((await etcdctl(isolated, 'put', 'before', '1')).ok).toBe(true);

    await isolator.isolate(isolated);
    // The cut member can no longer serve a linearizable read; the other two keep quorum.
    await until('the isolated member to refuse reads', async () =>
      (await etcdctl(isolated, 'get', 'before')).ok ? undefined : true,
    );
    // If the cut member led, the other two elect a new leader first: writes succeed after that.
    expect(
      await until('a write through another member', async () =>
        (await etcdctl(other, 'put', 'during', '2')).ok ? true : undefined,
      ),
    ).toBe(true);
    expect((await etcdctl(isolated, 'get', 'during', '--consistency=s', '--print-value-only')).out).toBe('');

    await isolator.heal(isolated);
    const healed = await until('the isolated member healed', async () => {
      const r = await etcdctl(isolated, 'get', 'during', '--print-value-only');
      return r.ok && r.out === '2' ? r.out : undefined;
    });
    expect(healed).toBe('2');
  });
});
