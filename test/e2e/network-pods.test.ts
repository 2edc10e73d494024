/**
 * The local cluster's network against the real API server: names in the hosts file, Services
 * through the proxy, and isolate()/heal() between real processes on their own 127.x addresses.
 * No node runs these Pods: each is bound to a node that does not exist and the test sets its
 * status (address, Ready) itself, as a kubelet would; its "container" is a process the test starts.
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
import { startNetwork } from '../cluster/network/index.ts';
import type { LocalNetwork } from '../cluster/network/index.ts';

const ns = `net-${process.pid}`;
let network: LocalNetwork;
let dir: string;
let core: CoreV1Api;
const children: ChildProcess[] = [];

/** Polls until probe gives a value; the test's timeout bounds the wait. */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
  return until(async () => {
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
net.createServer((s) => s.end('hi from ' + ip + '\\n')).listen(Number(port), ip, () => console.log('ready'));
require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
  const [h, p] = l.split(' '); const c = net.connect({ host: h, port: Number(p), timeout: 1500 });
  c.on('data', (d) => { console.log('ok ' + d.toString().trim()); c.destroy(); });
  c.on('timeout', () => { console.log('fail timeout'); c.destroy(); });
  c.on('error', (e) => console.log('fail ' + e.code));
});`;

/** Starts a Pod's process; given a cgroup directory, it enters it before exec, as a node can. */
async function podProcess(ip: string, port: number, cgroup?: string): Promise<PodProcess> {
  const argv = ['unshare', '--mount', '--propagation', 'private', process.execPath, '-e', POD_SCRIPT, ip, String(port)];
  const enter = 'echo $$ > "$0/cgroup.procs" && exec "$@"';
  const child = spawn(cgroup ? 'sh' : argv[0]!, cgroup ? ['-c', enter, cgroup, ...argv] : argv.slice(1), {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
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
  await until(() => core.readNamespacedServiceAccount({ name: 'default', namespace: ns }));
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await core?.deleteNamespace({ name: ns }).catch(() => undefined);
  await network?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('names (Pods given an address by the test)', () => {
  it('a Pod is named by its dashed address once it has one, and by hostname.subdomain once its headless Service exists', async () => {
    await fakePod('etcd-0', '127.77.0.1', { app: 'names' }, { hostname: 'etcd-0', subdomain: 'etcd' });
    const before = await hostsWith(`127.77.0.1\t127-77-0-1.${ns}.pod`);
    expect(before).not.toContain(`etcd-0.etcd.${ns}.svc`);
    await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'etcd' },
        spec: { clusterIP: 'None', selector: { app: 'names' }, ports: [{ port: 2380 }] },
      },
    });
    await hostsWith(`etcd-0.etcd.${ns}.svc`);
    expect(await resolveInPod(`etcd-0.etcd.${ns}.svc.cluster.local`)).toBe('127.77.0.1');
  });
});

describe('services', () => {
  it('a ClusterIP Service carries a TCP connection to the server of its Pod, and its name resolves to it', async () => {
    const server = net.createServer((s) => s.end('hello through the service\n'));
    await new Promise<void>((r) => server.listen(0, '127.77.0.2', r));
    const port = (server.address() as net.AddressInfo).port;
    await fakePod(
      'web',
      '127.77.0.2',
      { app: 'web' },
      { containers: [{ name: 'main', image: 'none', ports: [{ name: 'http', containerPort: port }] }] },
    );
    const svc = await core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] },
      },
    });
    const clusterIP = svc.spec?.clusterIP ?? '';
    const reply = await until(async () => {
      const r = await dialFromHost(clusterIP, 80);
      return r.startsWith('ok') ? r : undefined;
    });
    server.close();
    expect(reply).toBe('ok hello through the service');
    await hostsWith(`web.${ns}.svc`);
    expect(await resolveInPod(`web.${ns}.svc.cluster.local`)).toBe(clusterIP);
  });

  it('the kubernetes Service reaches the API server', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(inject('kubeconfig'));
    const kubernetes = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    const cluster = kc.getCurrentCluster();
    kc.clusters = kc.clusters.map((c) =>
      c === cluster ? { ...c, server: `https://${kubernetes.spec?.clusterIP}:443` } : c,
    );
    const version = await until(() => kc.makeApiClient(VersionApi).getCode());
    expect(version.major).toBe('1');
  });
});

describe('isolation', () => {
  it('isolate() cuts a Pod off another Pod both ways but not off the host, and heal() restores it', async () => {
    await fakePod('iso-a', '127.77.1.1', { app: 'iso' });
    await fakePod('iso-b', '127.77.1.2', { app: 'iso' });
    const a = await podProcess('127.77.1.1', 7000);
    const b = await podProcess('127.77.1.2', 7000);
    expect(await a.dial('127.77.1.2', 7000)).toBe('ok hi from 127.77.1.2');
    await network.synced();
    await network.isolate('127.77.1.1');
    expect(await a.dial('127.77.1.2', 7000)).toBe('fail timeout');
    expect(await b.dial('127.77.1.1', 7000)).toBe('fail timeout');
    expect(await a.dial('127.77.1.1', 7000)).toBe('ok hi from 127.77.1.1');
    expect(await dialFromHost('127.77.1.1', 7000)).toBe('ok hi from 127.77.1.1');
    await network.heal('127.77.1.1');
    expect(await a.dial('127.77.1.2', 7000)).toBe('ok hi from 127.77.1.2');
    expect(await b.dial('127.77.1.1', 7000)).toBe('ok hi from 127.77.1.1');
  });

  it('a container started in the cgroup cgroupFor() names is cut off from its first packet', async () => {
    await fakePod('iso-c', '127.77.1.3', { app: 'iso' });
    await fakePod('iso-d', '127.77.1.4', { app: 'iso' });
    const d = await podProcess('127.77.1.4', 7000);
    await network.synced();
    await network.isolate('127.77.1.3');
    const c = await podProcess('127.77.1.3', 7000, await network.cgroupFor('127.77.1.3'));
    expect(await c.dial('127.77.1.4', 7000)).toBe('fail timeout');
    expect(await d.dial('127.77.1.3', 7000)).toBe('fail timeout');
    await network.heal('127.77.1.3');
    expect(await c.dial('127.77.1.4', 7000)).toBe('ok hi from 127.77.1.4');
  });
});
