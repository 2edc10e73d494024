/**
 * Proof that a real node runs here (issue 27): etcd and kube-apiserver v1.37.2 (no controller
 * manager, no scheduler: the Pod names its node), one real node (containerd, runc, kubelet
 * v1.37.2), the images pause and etcd built by image.ts and imported, then a Pod running etcd:
 * waited for Ready, its logs read and an exec run through the kubelet API. Prints what it saw and
 * the Pod's start time; stops and removes everything (LOCALCLUSTER_KEEP=1 keeps the dir).
 *
 *   flock /tmp/etcd-operator-cluster.lock node localcluster/realnode/proof.ts   (root)
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from '../controlplane/index.ts';
import type { LocalControlPlane } from '../controlplane/index.ts';
import { binary } from '../controlplane/tools.ts';
import { writeImageArchive } from './image.ts';
import type { RealNode } from './node.ts';
import { sandboxImage, startRealNode } from './node.ts';

const version = 'v1.37.2';
const etcdVersion = '3.6.16';
const keep = process.env.LOCALCLUSTER_KEEP === '1';
const say = (s: string): void => console.log(`[${new Date().toISOString()}] ${s}`);

const dir = await mkdtemp(path.join(os.tmpdir(), 'eo-realnode-'));
say(`dir ${dir}`);
let cp: LocalControlPlane | undefined;
let node: RealNode | undefined;
let failed = false;
try {
  cp = await startControlPlane({
    dir: path.join(dir, 'controlplane'),
    controllerManager: false,
    scheduler: false,
    apiserverVersion: version,
  });
  say(`control plane up: ${cp.server} (${JSON.stringify(cp.timings)})`);
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const r = await cp!.kubectl(args, input === undefined ? undefined : { input });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  say(await kubectl(['version']));

  // Images, as OCI archives.
  const pause = await binary('pause');
  const images = path.join(dir, 'images');
  await writeImageArchive(
    { name: sandboxImage, files: [{ src: pause, dest: '/pause' }], entrypoint: ['/pause'] },
    path.join(images, 'pause.tar'),
  );
  // etcd from the cache; etcdctl and etcdutl when built (the image is upstream's layout either way).
  const etcdDir = path.dirname(await binary('etcd', etcdVersion));
  const tools = ['etcd', 'etcdctl', 'etcdutl'].filter((t) => existsSync(path.join(etcdDir, t)));
  say(`etcd image with ${tools.join(', ')}`);
  const etcdImage = `quay.io/coreos/etcd:v${etcdVersion}`;
  await writeImageArchive(
    {
      name: etcdImage,
      files: tools.map((t) => ({ src: path.join(etcdDir, t), dest: `/usr/local/bin/${t}` })),
      dirs: ['/var/etcd', '/var/lib/etcd', '/tmp'],
      cmd: ['/usr/local/bin/etcd'],
    },
    path.join(images, 'etcd.tar'),
  );
  say('images written');

  const t0 = Date.now();
  node = await startRealNode({
    dir: path.join(dir, 'node-a'),
    name: 'node-a',
    index: 1,
    pki: cp.pki,
    apiserverPort: cp.ports.apiserver,
    labels: { 'topology.kubernetes.io/zone': 'zone-a' },
    log: (l) => {
      if (/\bE\d{4}|error|fail/i.test(l) && !l.includes('level=info')) console.log(`  ${l.slice(0, 400)}`);
    },
  });
  say(`node up (kubelet healthz ok) in ${Date.now() - t0} ms`);
  for (const a of ['pause.tar', 'etcd.tar']) say(await node.importImage(path.join(images, a)));
  say(await node.crictl(['images']));

  // The Node registers and turns Ready.
  for (let i = 0; ; i++) {
    const r = await cp.kubectl([
      'get',
      'node',
      'node-a',
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]);
    if (r.stdout === 'True') break;
    if (i > 120) throw new Error(`node-a not Ready: ${r.stdout} ${r.stderr}`);
    await sleep(1000);
  }
  say(`node Ready ${Date.now() - t0} ms after the start`);
  say(await kubectl(['get', 'nodes', '-o', 'wide']));

  await kubectl(['create', 'serviceaccount', 'default']).catch(() => undefined);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'etcd-proof', namespace: 'default' },
    spec: {
      nodeName: 'node-a',
      automountServiceAccountToken: false,
      containers: [
        {
          name: 'etcd',
          image: etcdImage,
          imagePullPolicy: 'IfNotPresent',
          command: [
            '/usr/local/bin/etcd',
            '--name=proof',
            '--data-dir=/var/lib/etcd',
            '--listen-client-urls=http://0.0.0.0:2379',
            '--advertise-client-urls=http://127.0.0.1:2379',
          ],
          readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 },
        },
      ],
    },
  };
  const created = Date.now();
  await kubectl(['apply', '-f', '-'], JSON.stringify(pod));
  let phase = '';
  for (;;) {
    const r = await cp.kubectl([
      'get',
      'pod',
      'etcd-proof',
      '-o',
      'jsonpath={.status.phase} {.status.conditions[?(@.type=="Ready")].status}',
    ]);
    phase = r.stdout;
    if (phase === 'Running True') break;
    if (Date.now() - created > 180_000) throw new Error(`Pod not Ready in 180 s: ${phase}`);
    await sleep(100);
  }
  say(`Pod Running and Ready ${Date.now() - created} ms after it was created`);
  say(await kubectl(['get', 'pod', 'etcd-proof', '-o', 'wide']));
  say(await node.crictl(['ps', '-a']));
  say((await kubectl(['logs', 'etcd-proof', '--tail=3'])).slice(0, 1500));
  say(await kubectl(['exec', 'etcd-proof', '--', 'etcd', '--version']));
  if (tools.includes('etcdctl')) {
    say(await kubectl(['exec', 'etcd-proof', '--', 'etcdctl', 'endpoint', 'health']));
    say(await kubectl(['exec', 'etcd-proof', '--', 'etcdctl', 'put', 'proof', 'real-node']));
  }
  say(await kubectl(['get', 'events', '-A']));
  await kubectl(['delete', 'pod', 'etcd-proof', '--wait=true', '--timeout=60s']);
  say('Pod deleted');
  // More Pods of the same spec, one after another on the same node (PROOF_PODS, default 4): their
  // start times, beside the first's (which is the node's first Pod).
  const more = Number(process.env.PROOF_PODS ?? '4');
  for (let i = 1; i <= more; i++) {
    const name = `etcd-proof-${i}`;
    const t = Date.now();
    await kubectl(['apply', '-f', '-'], JSON.stringify({ ...pod, metadata: { ...pod.metadata, name } }));
    for (;;) {
      const r = await cp.kubectl([
        'get',
        'pod',
        name,
        '-o',
        'jsonpath={.status.phase} {.status.conditions[?(@.type=="Ready")].status}',
      ]);
      if (r.stdout === 'Running True') break;
      if (Date.now() - t > 180_000) throw new Error(`${name} not Ready in 180 s: ${r.stdout}`);
      await sleep(100);
    }
    say(`${name} Running and Ready ${Date.now() - t} ms after it was created`);
    await kubectl(['delete', 'pod', name, '--wait=true', '--timeout=60s']);
  }
} catch (err) {
  failed = true;
  console.error('proof failed:', err);
} finally {
  if (node) await node.stop().catch((err: unknown) => console.error('node stop:', err));
  if (cp) await cp.stop();
  if (!keep) await rm(dir, { recursive: true, force: true });
  say(`stopped${keep ? `, kept ${dir}` : ''}`);
}
process.exit(failed ? 1 : 0);
