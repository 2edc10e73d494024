/**
 * Each Pod in its own network namespace on the local cluster: two unmodified etcd Pods listening
 * on 0.0.0.0:2379 and a third program on the same port (Node, in the operator's own image, which
 * has it) run side by side; a ClusterIP Service
 * reaches each etcd, from the host and from a Pod, and one with no Pod behind it refuses the host at
 * once; a headless Service's name resolves to both;
 * the host reaches Pod IPs; a Pod reaches the API server through the `kubernetes` Service; and
 * port-forward reaches a program bound to 127.0.0.1 inside its Pod.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_AGENT_IMAGE } from '../../effects/kubernetes/context.ts';
import { kubeconfigArgs } from '../../localcluster/controlplane/kubectl.ts';
import { POD_RANGES } from '../../localcluster/realnode/routes.ts';
import { createNamespace, deleteNamespace, isReady, podWhen } from './pods.ts';
import { until } from '../../localcluster/until.ts';
import { applyManifest, kubectl } from './kube.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

const ns = `podnet-${process.pid}`;
const ETCD = 'quay.io/coreos/etcd:v3.6.16';
/** The operator's image: Node at /usr/local/bin/node. */
const NODE_IMAGE = DEFAULT_AGENT_IMAGE;
const NODE = '/usr/local/bin/node';
let core: CoreV1Api;

/** An etcd as most charts run it: listening on every address of its Pod. */
function etcdOnAllAddresses(name: string): string {
  return `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: ${ns}, labels: { app: pn-etcd } }
spec:
  hostname: ${name}
  subdomain: pn-peers
  terminationGracePeriodSeconds: 5
  containers:
  - name: etcd
    image: ${ETCD}
    command: [/usr/local/bin/etcd]
    args:
    - --name=${name}
    - --data-dir=/tmp/data
    - --listen-client-urls=http://0.0.0.0:2379
    - --advertise-client-urls=http://${name}.pn-peers.${ns}.svc:2379
    - --listen-peer-urls=http://0.0.0.0:2380
    - --initial-advertise-peer-urls=http://${name}.pn-peers.${ns}.svc:2380
    - --initial-cluster=${name}=http://${name}.pn-peers.${ns}.svc:2380
    ports: [{ name: client, containerPort: 2379 }]
    readinessProbe: { httpGet: { path: /readyz, port: client }, periodSeconds: 1 }
    volumeMounts: [{ name: data, mountPath: /tmp/data }]
  volumes: [{ name: data, emptyDir: {} }]
`;
}

/** A program on the etcd Pods' port too, and on 127.0.0.1:8080 of its own Pod only. */
const WEB = `
const http = require('node:http');
http.createServer((q, s) => s.end('web on 0.0.0.0\\n')).listen(2379, '0.0.0.0');
http.createServer((q, s) => s.end('web on its loopback\\n')).listen(8080, '127.0.0.1');`;

function manifest(): string {
  const web = `apiVersion: v1
kind: Pod
metadata: { name: web, namespace: ${ns}, labels: { app: pn-web } }
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: web
    image: ${NODE_IMAGE}
    command: [${NODE}, -e, ${JSON.stringify(WEB)}]
    readinessProbe: { tcpSocket: { port: 2379 }, periodSeconds: 1 }
`;
  const services = `apiVersion: v1
kind: Service
metadata: { name: pn-etcd, namespace: ${ns} }
spec:
  selector: { app: pn-etcd }
  ports: [{ port: 2379, targetPort: client }]
---
apiVersion: v1
kind: Service
metadata: { name: pn-peers, namespace: ${ns} }
spec:
  clusterIP: None
  selector: { app: pn-etcd }
  ports: [{ port: 2380 }]
`;
  return [etcdOnAllAddresses('etcd-a'), etcdOnAllAddresses('etcd-b'), web, services].join('---\n');
}

/** The member ID an etcd answers with, from a fresh connection to `url`. */
async function memberID(url: string): Promise<string> {
  const r = await fetch(`${url}/v3/maintenance/status`, {
    method: 'POST',
    body: '{}',
    headers: { connection: 'close' },
  });
  return ((await r.json()) as { header: { member_id: string } }).header.member_id;
}

/** Runs a Node script in the web Pod through `kubectl exec`; returns what it printed. */
async function inWeb(script: string): Promise<string> {
  const r = await kubectl(['exec', '-n', ns, 'web', '--', NODE, '-e', script], { check: true });
  return r.stdout.trim();
}

/** `kubectl port-forward pod/NAME :PORT`; resolves to the local port once it forwards. */
async function portForward(pod: string, port: number): Promise<{ child: ChildProcess; local: number }> {
  const child = spawn(
    inject('kubectlPath'),
    [...kubeconfigArgs(inject('kubeconfig')), 'port-forward', '-n', ns, `pod/${pod}`, `:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  const local = await until('kubectl port-forward to listen', () => {
    if (child.exitCode !== null) throw new Error('kubectl port-forward exited');
    return Promise.resolve(/Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out)?.[1]);
  });
  return { child, local: Number(local) };
}

describe.runIf(process.getuid?.() === 0 && inject('clusterHasNode'))('a network namespace per Pod', () => {
  const pods: Record<string, V1Pod> = {};

  beforeAll(async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(inject('kubeconfig'));
    core = kc.makeApiClient(CoreV1Api);
    await createNamespace(core, ns);
    await applyManifest(manifest());
    for (const name of ['etcd-a', 'etcd-b', 'web']) pods[name] = await podWhen(core, ns, name, isReady);
  });

  afterAll(async () => {
    if (core) await deleteNamespace(core, ns);
  });

  it('two etcd Pods and another program all listen on 0.0.0.0:2379, each at its own Pod IP, reached from the host', async () => {
    const ips = Object.values(pods).map((p) => p.status?.podIP ?? '');
    expect(new Set(ips).size).toBe(3);
    const sixteen = (cidr: string): string => cidr.split('.').slice(0, 2).join('.') + '.';
    expect(
      ips.every((ip) => ip.startsWith(sixteen(POD_RANGES))),
      `${ips.join(' ')} in ${POD_RANGES}`,
    ).toBe(true);
    const [a, b] = await Promise.all(
      ['etcd-a', 'etcd-b'].map((n) => memberID(`http://${pods[n]!.status!.podIP}:2379`)),
    );
    expect(a).not.toBe(b);
    const web = await fetch(`http://${pods.web!.status!.podIP}:2379/`);
    expect(await web.text()).toBe('web on 0.0.0.0\n');
  });

  it('a ClusterIP Service reaches each of its Pods, from the host by its ClusterIP and from a Pod by its name', async () => {
    const svc = await core.readNamespacedService({ name: 'pn-etcd', namespace: ns });
    const clusterIP = svc.spec?.clusterIP ?? '';
    const expected = new Set(
      await Promise.all(['etcd-a', 'etcd-b'].map((n) => memberID(`http://${pods[n]!.status!.podIP}:2379`))),
    );
    const fromHost = await until('both members from the host', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) seen.add(await memberID(`http://${clusterIP}:2379`));
      return seen.size === 2 ? seen : undefined;
    });
    expect(fromHost).toEqual(expected);
    const fromPod = await inWeb(`(async () => {
        const seen = new Set();
        for (let i = 0; i < 6; i++) {
          const r = await fetch('http://pn-etcd.${ns}.svc:2379/v3/maintenance/status', { method: 'POST', body: '{}', headers: { connection: 'close' } });
          seen.add((await r.json()).header.member_id);
        }
        console.log([...seen].sort().join(' '));
      })()`);
    expect(fromPod).toBe([...expected].sort().join(' '));
  });

  it('a ClusterIP with no ready Pod behind it refuses the host at once rather than leaving the machine', async () => {
    const svc = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'pn-empty' }, spec: { selector: { app: 'nobody' }, ports: [{ port: 80 }] } },
    });
    const refused = await new Promise<string>((resolve) => {
      const c = net.connect({ host: svc.spec?.clusterIP ?? '', port: 80, timeout: 5_000 });
      c.once('connect', () => resolve('connected'));
      c.once('timeout', () => resolve('timeout'));
      c.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    expect(refused).toBe('ECONNREFUSED');
  });

  it("a headless Service's names resolve in a Pod to the Pods it selects", async () => {
    // The C library's resolver (getaddrinfo, as `getent ahostsv4`), through the Pod's resolv.conf.
    const lookup = (name: string) =>
      inWeb(`require('node:dns').lookup('${name}', { all: true, family: 4 }, (err, found) => {
        if (err) throw err;
        console.log(found.map((a) => a.address).join(' '));
      })`);
    // The names follow the Service's EndpointSlice, which the controller manager writes after the
    // Pods turned Ready, and CoreDNS reads by a watch: both Pods' addresses come within seconds.
    const want = [pods['etcd-a']!.status!.podIP, pods['etcd-b']!.status!.podIP].sort().join(' ');
    let answered = '';
    await until(
      () => `pn-peers.${ns}.svc to resolve to ${want} (last answer: ${answered || 'none'})`,
      async () => {
        answered = (await lookup(`pn-peers.${ns}.svc`)).split(' ').sort().join(' ');
        return answered === want ? true : undefined;
      },
      30_000,
      500,
    );
    expect(await lookup(`etcd-b.pn-peers.${ns}.svc`)).toBe(pods['etcd-b']!.status!.podIP);
  });

  it('a Pod reaches the API server through the kubernetes Service, its certificate valid for that address', async () => {
    const out = await inWeb(`
        const fs = require('node:fs');
        const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
        const host = process.env.KUBERNETES_SERVICE_HOST, port = process.env.KUBERNETES_SERVICE_PORT;
        require('node:https').get({ host, port, path: '/version', ca: fs.readFileSync(dir + '/ca.crt'),
          headers: { authorization: 'Bearer ' + fs.readFileSync(dir + '/token', 'utf8') } }, (r) => {
          let body = ''; r.on('data', (d) => (body += d)); r.on('end', () => console.log(host, r.statusCode, JSON.parse(body).major));
        }).on('error', (e) => console.log('error', e.message));`);
    const kubernetes = await core.readNamespacedService({ name: 'kubernetes', namespace: 'default' });
    expect(out).toBe(`${kubernetes.spec?.clusterIP} 200 1`);
  });

  it('each Pod has its own loopback: port-forward reaches a program bound to 127.0.0.1 in its Pod', async () => {
    // etcd's own client, in its Pod, reaches it on 127.0.0.1.
    const inside = await kubectl([
      'exec',
      '-n',
      ns,
      'etcd-a',
      '--',
      'etcdctl',
      '--endpoints=http://127.0.0.1:2379',
      'endpoint',
      'status',
      '--write-out=json',
    ]);
    const [status] = JSON.parse(inside.stdout) as { Status: { version: string } }[];
    expect(status?.Status.version).toBe('3.6.16');
    const pf = await portForward('web', 8080);
    try {
      const r = await fetch(`http://127.0.0.1:${pf.local}/`, { headers: { connection: 'close' } });
      expect(await r.text()).toBe('web on its loopback\n');
    } finally {
      pf.child.kill();
    }
  });
});
