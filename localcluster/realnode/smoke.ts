/**
 * The local cluster with its real nodes, end to end: startLocalCluster (control plane v1.37.2,
 * three real nodes in zones a, b, c), then a three-member
 * etcd cluster of Pods, one per node, whose members find each other by their headless Service's
 * names (cluster DNS) across nodes (the machine's routes), on the image quay.io/coreos/etcd:v3.6.16
 * pulled from the local registry. Checks a Service from the machine and from a Pod, prints each
 * Pod's start (created -> Ready), then deletes the namespace and stops the cluster.
 *
 *   flock /tmp/etcd-operator-cluster.lock node localcluster/realnode/smoke.ts   (root)
 */
import { appendFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { binary, run } from '../controlplane/tools.ts';
import { startLocalCluster, type LocalCluster } from '../index.ts';

const say = (s: string): void => console.log(`[${new Date().toISOString()}] ${s}`);
const keep = process.env.LOCALCLUSTER_KEEP === '1';
const ns = 'smoke';
const members = ['etcd-0', 'etcd-1', 'etcd-2'];
const nodes = ['node-a', 'node-b', 'node-c'];
const peer = (m: string): string => `http://${m}.etcd.${ns}.svc.cluster.local:2380`;

const dir = await mkdtemp(path.join(os.tmpdir(), 'eo-realcluster-'));
say(`dir ${dir}`);
let cluster: LocalCluster | undefined;
let failed = false;
try {
  const t0 = Date.now();
  cluster = await startLocalCluster({
    dir,
    log: (l) => appendFileSync(path.join(dir, 'cluster.log'), l + '\n'),
  });
  say(`cluster started in ${Date.now() - t0} ms`);
  const c = cluster;
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const r = await c.kubectl(args, input === undefined ? undefined : { input });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await kubectl(['wait', '--for=condition=Ready', 'node', '--all', '--timeout=180s']);
  say(
    `nodes Ready ${Date.now() - t0} ms after the start\n${await kubectl(['get', 'nodes', '-L', 'topology.kubernetes.io/zone', '-o', 'wide'])}`,
  );
  say(await kubectl(['version']));

  await kubectl(['create', 'namespace', ns]);
  const service = (name: string, headless: boolean): object => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns },
    spec: {
      ...(headless ? { clusterIP: 'None', publishNotReadyAddresses: true } : {}),
      selector: { app: 'etcd' },
      ports: [{ name: 'client', port: 2379 }, ...(headless ? [{ name: 'peer', port: 2380 }] : [])],
    },
  });
  await kubectl(['apply', '-f', '-'], JSON.stringify(service('etcd', true)));
  await kubectl(['apply', '-f', '-'], JSON.stringify(service('etcd-client', false)));
  const pod = (m: string, node: string): object => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: m, namespace: ns, labels: { app: 'etcd' } },
    spec: {
      hostname: m,
      subdomain: 'etcd',
      nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [
        {
          name: 'etcd',
          image: 'quay.io/coreos/etcd:v3.6.16',
          command: [
            '/usr/local/bin/etcd',
            `--name=${m}`,
            '--data-dir=/var/lib/etcd',
            '--listen-client-urls=http://0.0.0.0:2379',
            `--advertise-client-urls=http://${m}.etcd.${ns}.svc.cluster.local:2379`,
            '--listen-peer-urls=http://0.0.0.0:2380',
            `--initial-advertise-peer-urls=${peer(m)}`,
            `--initial-cluster=${members.map((x) => `${x}=${peer(x)}`).join(',')}`,
            '--initial-cluster-state=new',
          ],
          readinessProbe: { httpGet: { path: '/readyz', port: 2379 }, periodSeconds: 1 },
        },
      ],
    },
  });
  const created = new Map<string, number>();
  for (const [i, m] of members.entries()) {
    created.set(m, Date.now());
    await kubectl(['apply', '-f', '-'], JSON.stringify(pod(m, nodes[i]!)));
  }
  const ready = new Map<string, number>();
  while (ready.size < members.length) {
    if (Date.now() - t0 > 600_000)
      throw new Error(`not Ready: ${await kubectl(['get', 'pods', '-n', ns, '-o', 'wide'])}`);
    for (const m of members) {
      if (ready.has(m)) continue;
      const r = await c.kubectl([
        'get',
        'pod',
        m,
        '-n',
        ns,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      if (r.stdout === 'True') ready.set(m, Date.now());
    }
    await sleep(100);
  }
  for (const m of members) say(`${m} created -> Ready ${ready.get(m)! - created.get(m)!} ms`);
  say(await kubectl(['get', 'pods', '-n', ns, '-o', 'wide']));

  // A Service from the machine (the network part's DNAT) and from a Pod, by name (cluster DNS).
  const ip = await kubectl(['get', 'service', 'etcd-client', '-n', ns, '-o', 'jsonpath={.spec.clusterIP}']);
  const etcdctl = await binary('etcdctl', '3.6.16');
  say(`from the machine: ${await run(etcdctl, [`--endpoints=http://${ip}:2379`, 'member', 'list', '-w', 'table'])}`);
  const inPod = [
    'exec',
    '-n',
    ns,
    'etcd-0',
    '--',
    'etcdctl',
    `--endpoints=http://etcd-client.${ns}.svc.cluster.local:2379`,
  ];
  say(`from etcd-0: ${await kubectl([...inPod, 'endpoint', 'health', '--cluster'])}`);
  say(await kubectl([...inPod, 'put', 'smoke', 'real-nodes']));
  say((await kubectl(['logs', '-n', ns, 'etcd-2', '--tail=2'])).slice(0, 800));

  // Single-member etcd Pods on a node that holds the image, one after another (the proof's spec:
  // a readiness probe on /health every second): their start alone, polled every 100 ms.
  for (let i = 1; i <= 3; i++) {
    const name = `single-${i}`;
    const single = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': 'node-b' },
        containers: [
          {
            name: 'etcd',
            image: 'quay.io/coreos/etcd:v3.6.16',
            command: [
              '/usr/local/bin/etcd',
              '--data-dir=/tmp/etcd',
              '--listen-client-urls=http://0.0.0.0:2379',
              '--advertise-client-urls=http://127.0.0.1:2379',
            ],
            readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 },
          },
        ],
      },
    };
    const t = Date.now();
    await kubectl(['apply', '-f', '-'], JSON.stringify(single));
    for (;;) {
      const r = await c.kubectl([
        'get',
        'pod',
        name,
        '-n',
        ns,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      if (r.stdout === 'True') break;
      if (Date.now() - t > 120_000) throw new Error(`${name} not Ready in 120 s`);
      await sleep(100);
    }
    say(`${name} (image present) created -> Ready ${Date.now() - t} ms`);
    await kubectl(['delete', 'pod', name, '-n', ns, '--wait=true', '--timeout=60s']);
  }
  await kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=120s']);
  say('namespace deleted');
} catch (err) {
  failed = true;
  console.error('smoke failed:', err);
} finally {
  if (cluster) await cluster.stop().catch((err: unknown) => console.error('stop:', err));
  if (!keep) await rm(dir, { recursive: true, force: true });
  say(`stopped${keep ? `, kept ${dir}` : ''}`);
}
process.exit(failed ? 1 : 0);
