/**
 * The local cluster's network against the real API server: names in the hosts file, Services
 * through DNAT rules, and isolate()/heal() between real processes in their own network
 * namespaces. No node runs these Pods: each is bound to a node that does not exist and the test
 * sets its status (address, Ready) itself, as a kubelet would; its "container" is a process the
 * test starts in a namespace it makes as a node does (PodNetns).
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startNetwork } from '../../localcluster/network/index.ts';
import type { LocalNetwork } from '../../localcluster/network/index.ts';
import { PodNetns } from '../../localcluster/network/podNetns.ts';
import { until } from '../until.ts';

const ns = `net-${process.pid}`;
const sandboxes = new PodNetns(`e2e-network-pods-${process.pid}`, () => undefined);
const attached: string[] = [];
let network: LocalNetwork;
let dir: string;
let core: CoreV1Api;
const children: ChildProcess[] = [];

/** Creates a Pod no node will run and reports it running at `ip`, as a kubelet would. */
async function fakePod(
  name: string,
  ip: string,
  labels: Record<string, string>,
  spec: Partial<V1Pod['spec']> = {},
): Promise<void> {
  const body: V1Pod = {
    metadata: { name, namespace: ns, labels },
    spec: { nodeName: 'e2e-no-such-node', containers: [{ name: 'main', image: 'none' }], ...spec },
  };
  const pod = await core.createNamespacedPod({ namespace: ns, body });
  pod.status = {
    phase: 'Running',
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [{ type: 'Ready', status: 'True' }],
  };
  await core.replaceNamespacedPodStatus({ name, namespace: ns, body: pod });
}

/** What the hosts file says once it mentions `text`. */
function hostsWith(text: string): Promise<string> {
  return until(`the hosts file to mention ${text}`, async () => {
    const hosts = await readFile(network.hostsFile, 'utf8');
    return hosts.includes(text) ? hosts : undefined;
  });
}

/** Resolves a name the way a Pod does: glibc reading the hosts file bind-mounted at /etc/hosts. */
async function resolveInPod(name: string): Promise<string> {
  const script = `mount --bind "$0" /etc/hosts && getent ahostsv4 "$1" | head -n1 | cut -d' ' -f1`;
  const { stdout } = await promisify(execFile)('unshare', [
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    script,
    network.hostsFile,
    name,
  ]);
  return stdout.trim();
}

/** A process listening on ip:port that greets, and dials (without binding its address) when told. */
interface PodProcess {
  dial(ip: string, port: number): Promise<string>;
}

const POD_SCRIPT = `
const net = require('node:net'); const [ip, port] = process.argv.slice(1);
const me = require('node:os').networkInterfaces().eth0?.find((a) => a.family === 'IPv4')?.address;
net.createServer((s) => s.end('hi from ' + me + '\\n')).listen(Number(port), ip, () => console.log('ready'));
require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const [h, p] = l.split(' '); const c = net.connect({ host: h, port: Number(p), timeout: 1500 });
  c.on('data', (d) => { console.log('ok ' + d.toString().trim()); c.destroy(); });
  c.on('timeout', () => { console.log('fail timeout'); c.destroy(); });
  c.on('error', (e) => console.log('fail ' + e.code));
});`;

/** Starts a Pod's process in a network namespace of its own with the Pod's address, listening on 0.0.0.0. */
async function podProcess(ip: string, port: number): Promise<PodProcess> {
  const uid = `${ns}-${ip}`;
  const netns = await sandboxes.attach(uid, ip);
  attached.push(uid);
  const argv = ['--net=' + netns, '--', process.execPath, '-e', POD_SCRIPT, '0.0.0.0', String(port)];
  const child = spawn('nsenter', argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => String((await lines.next()).value);
  expect(await next()).toBe('ready');
  return {
    async dial(host: string, p: number): Promise<string> {
      child.stdin.write(`${host} ${p}\n`);
      return next();
    },
  };
}

/** Dials from the host (the test process): what the node agent and its probes do. */
function dialFromHost(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const c = net.connect({ host, port, timeout: 1500 });
    c.on('data', (d) => {
      resolve(`ok ${d.toString().trim()}`);
      c.destroy();
    });
    c.on('timeout', () => {
      resolve('fail timeout');
      c.destroy();
    });
    c.on('error', (e: NodeJS.ErrnoException) => resolve(`fail ${e.code}`));
  });
}

beforeAll(async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  core = kc.makeApiClient(CoreV1Api);
  dir = await mkdtemp(path.join(os.tmpdir(), 'e2e-network-'));
  network = await startNetwork({ dir, kubeconfigPath: inject('kubeconfig') });
  await core.createNamespace({ body: { metadata: { name: ns } } });
  // Pods are refused until the controller manager has made the namespace's default ServiceAccount.
  await until(`ServiceAccount default in ${ns}`, () =>
    core.readNamespacedServiceAccount({ name: 'default', namespace: ns }),
  );
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const uid of attached) await sandboxes.detach(uid);
  await core?.deleteNamespace({ name: ns }).catch(() => undefined);
  await network?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.runIf(process.getuid?.() === 0)('the network of Pods given an address by the test', () => {
  it('a Pod is named by its dashed address once it has one, and by hostname.subdomain once its headless Service exists', async () => {
    await fakePod('etcd-0', '10.244.253.1', { app: 'names' }, { hostname: 'etcd-0', subdomain: 'etcd' });
    const before = await hostsWith(`10.244.253.1\t10-244-253-1.${ns}.pod`);
    expect(before).not.toContain(`etcd-0.etcd.${ns}.svc`);
    await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'etcd' },
        spec: { clusterIP: 'None', selector: { app: 'names' }, ports: [{ port: 2380 }] },
      },
    });
    await hostsWith(`etcd-0.etcd.${ns}.svc`);
    expect(await resolveInPod(`etcd-0.etcd.${ns}.svc.cluster.local`)).toBe('10.244.253.1');
  });

  it('a ClusterIP Service carries TCP connections from the host and from a Pod to its Pods, and its name resolves to it', async () => {
    const web = await podProcess('10.244.253.2', 8080);
    const client = await podProcess('10.244.253.3', 8080);
    await fakePod(
      'web',
      '10.244.253.2',
      { app: 'web' },
      { containers: [{ name: 'main', image: 'none', ports: [{ name: 'http', containerPort: 8080 }] }] },
    );
    const svc = await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] },
      },
    });
    const clusterIP = svc.spec?.clusterIP ?? '';
    const reply = await until('a reply through the ClusterIP', async () => {
      const r = await dialFromHost(clusterIP, 80);
      return r.startsWith('ok') ? r : undefined;
    });
    expect(reply).toBe('ok hi from 10.244.253.2');
    expect(await client.dial(clusterIP, 80)).toBe('ok hi from 10.244.253.2');
    // Hairpin: the Pod behind the Service reaches itself through it.
    expect(await web.dial(clusterIP, 80)).toBe('ok hi from 10.244.253.2');
    await hostsWith(`web.${ns}.svc`);
    expect(await resolveInPod(`web.${ns}.svc.cluster.local`)).toBe(clusterIP);
    expect(network.serviceAddresses()).toContain(`${clusterIP}:80`);
  });

  it('the kubernetes Service reaches the API server (from a Pod: pod-network.test.ts)', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(inject('kubeconfig'));
    const kubernetes = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    const cluster = kc.getCurrentCluster();
    kc.clusters = kc.clusters.map((c) =>
      c === cluster ? { ...c, server: `https://${kubernetes.spec?.clusterIP}:443` } : c,
    );
    const version = await until('the API server version', () => kc.makeApiClient(VersionApi).getCode());
    expect(version.major).toBe('1');
  });

  it('a ClusterIP with no ready Pod behind it refuses at once rather than leaving the machine', async () => {
    const svc = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'empty' }, spec: { selector: { app: 'nobody' }, ports: [{ port: 80 }] } },
    });
    await network.synced();
    expect(await dialFromHost(svc.spec?.clusterIP ?? '', 80)).toBe('fail ECONNREFUSED');
  });

  it('isolate() cuts a Pod off another Pod both ways but not off the host or itself, and heal() restores it', async () => {
    await fakePod('iso-a', '10.244.253.11', { app: 'iso' });
    await fakePod('iso-b', '10.244.253.12', { app: 'iso' });
    const a = await podProcess('10.244.253.11', 7000);
    const b = await podProcess('10.244.253.12', 7000);
    expect(await a.dial('10.244.253.12', 7000)).toBe('ok hi from 10.244.253.12');
    await network.isolate('10.244.253.11');
    expect(await a.dial('10.244.253.12', 7000)).toBe('fail timeout');
    expect(await b.dial('10.244.253.11', 7000)).toBe('fail timeout');
    expect(await a.dial('127.0.0.1', 7000)).toBe('ok hi from 10.244.253.11');
    expect(await a.dial('10.244.253.11', 7000)).toBe('ok hi from 10.244.253.11');
    expect(await dialFromHost('10.244.253.11', 7000)).toBe('ok hi from 10.244.253.11');
    await network.heal('10.244.253.11');
    expect(await a.dial('10.244.253.12', 7000)).toBe('ok hi from 10.244.253.12');
    expect(await b.dial('10.244.253.11', 7000)).toBe('ok hi from 10.244.253.11');
  });
});
