/**
 * `kubectl exec`, `attach` and `port-forward` against the local cluster, as a user runs them:
 * kubectl talks WebSockets to the API server, which speaks SPDY/3.1 to the node's kubelet API.
 * Commands run in BusyBox's image (etcd's has no shell) and in etcd's, with its own tools. Output, exit codes, stdin, a terminal and its size, a container's own stdin and
 * output, forwarded connections (several at once, and one to a closed port), the chart's
 * `kubectl exec deploy/<release> -- etcd-operator journal <cluster>`, and etcdctl through
 * `kubectl port-forward pod/<member> 2379` to a member the operator made.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeconfigArgs } from '../../localcluster/controlplane/kubectl.ts';
import { BUSYBOX_IMAGE } from '../../localcluster/images.ts';
import { createNamespace, deleteNamespace, etcdPod, isReady, podWhen } from './pods.ts';
import { until } from '../../localcluster/until.ts';
import { chartDir, helm } from '../charts/helm.ts';
import { TestPki } from '../effects/etcd/test-pki.ts';
import { clientsOf } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { applyManifest, kubectl } from './kube.ts';
import { createClusterSecrets } from './tls-cluster.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

const run = promisify(execFile);
const ns = `kexec-${process.pid}`;
const root = process.getuid?.() === 0;
let core: CoreV1Api;

/** kubectl as a long-running child (port-forward, attach), with what it printed so far. */
function kubectlChild(args: readonly string[]): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(inject('kubectlPath'), [...kubeconfigArgs(inject('kubeconfig')), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  return { child, out: () => out, err: () => err };
}

const exited = (child: ChildProcess): Promise<number> =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (c) => r(c ?? 1)));

/** `kubectl port-forward pod/NAME :PORT`; resolves to the local port once it forwards. */
async function portForward(pod: string, port: number, namespace = ns) {
  const pf = kubectlChild(['port-forward', '-n', namespace, `pod/${pod}`, `:${port}`]);
  const local = await until('kubectl port-forward to listen', () => {
    if (pf.child.exitCode !== null) throw new Error(`kubectl port-forward exited: ${pf.err()}`);
    return Promise.resolve(/Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(pf.out())?.[1]);
  });
  return { ...pf, local: Number(local) };
}

describe.runIf(root && inject('clusterHasNode'))('kubectl exec, attach and port-forward on the local node', () => {
  beforeAll(async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(inject('kubeconfig'));
    core = kc.makeApiClient(CoreV1Api);
    await createNamespace(core, ns);
    // Listening on its loopback too: a kubelet's port-forward dials localhost in the Pod.
    const etcd = etcdPod({ name: 'etcd' });
    const args = etcd.spec!.containers[0]!.args!;
    const listen = args.findIndex((a) => a.startsWith('--listen-client-urls='));
    args[listen] = `${args[listen]},http://127.0.0.1:2379`;
    await core.createNamespacedPod({ namespace: ns, body: etcd });
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'shell' },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'main',
              image: BUSYBOX_IMAGE,
              command: ['/bin/sh', '-c', 'echo started; exec sleep 3600'],
              workingDir: `/var/lib/kexec-${process.pid}/work`,
              env: [{ name: 'GREETING', value: 'hello from the container' }],
              securityContext: { runAsUser: 4321, runAsGroup: 4321 },
            },
          ],
        },
      },
    });
    await podWhen(core, ns, 'shell', isReady);
    await podWhen(core, ns, 'etcd', isReady);
  });
  afterAll(() => deleteNamespace(core, ns));

  it('kubectl exec runs in the container (its env, user, working dir, mounts) and passes exit codes on', async () => {
    const started = Date.now();
    const r = await kubectl([
      'exec',
      '-n',
      ns,
      'shell',
      '--',
      '/bin/sh',
      '-c',
      'echo "$GREETING"; id -u; pwd; hostname; echo to-stderr >&2; exit 3',
    ]);
    console.log(`kubectl exec round trip: ${Date.now() - started} ms`);
    expect(r.stdout.split('\n')).toEqual(
      expect.arrayContaining(['hello from the container', '4321', `/var/lib/kexec-${process.pid}/work`, 'shell']),
    );
    expect(r.stderr).toContain('to-stderr');
    expect(r.stderr).toContain('command terminated with exit code 3');
    expect(r.code).toBe(3);
    expect((await kubectl(['exec', '-n', ns, 'shell', '--', 'false'])).code).toBe(1);
    expect(await kubectl(['exec', '-n', ns, 'shell', '--', 'true'])).toMatchObject({ code: 0, stdout: '' });
    // The etcd image's tools, found on its PATH, talk to the member on its Pod IP.
    const podIP = (await core.readNamespacedPod({ namespace: ns, name: 'etcd' })).status?.podIP;
    const health = await kubectl([
      'exec',
      '-n',
      ns,
      'etcd',
      '-c',
      'etcd',
      '--',
      'etcdctl',
      `--endpoints=http://${podIP}:2379`,
      'endpoint',
      'health',
    ]);
    expect(health).toMatchObject({ code: 0 });
    expect(health.stdout + health.stderr).toContain('is healthy');
    const missing = await kubectl(['exec', '-n', ns, 'shell', '--', 'no-such-command']);
    expect(missing.code).not.toBe(0);
  });

  it('kubectl exec -i pipes stdin through, byte for byte, and ends it', async () => {
    expect(
      await kubectl(['exec', '-i', '-n', ns, 'shell', '--', 'cat'], { input: 'line one\nline two\n' }),
    ).toMatchObject({ code: 0, stdout: 'line one\nline two\n' });
    const big = Buffer.alloc(3 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251;
    const text = big.toString('base64');
    const sum = createHash('sha256').update(text).digest('hex');
    const r = await kubectl(['exec', '-i', '-n', ns, 'shell', '--', 'sha256sum'], { input: text });
    expect(r.stdout.split(' ')[0]).toBe(sum);
  });

  it("kubectl exec -it gets a terminal of the size of kubectl's own", async () => {
    // kubectl needs a terminal of its own for -t: `script` gives it one, 30 rows by 100 columns.
    const cmd = [
      inject('kubectlPath'),
      ...kubeconfigArgs(inject('kubeconfig')),
      'exec',
      '-it',
      '-n',
      ns,
      'shell',
      '--',
      'sh',
      '-c',
      "'sleep 1; tty; stty size; exit 4'",
    ].join(' ');
    const run = spawn('script', ['--quiet', '--return', '--command', `stty rows 30 cols 100; ${cmd}`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    run.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const code = await exited(run);
    expect(out).toMatch(/\/dev\/pts\/\d+/);
    expect(out).toContain('30 100');
    expect(code).toBe(4);
  });

  it("kubectl attach -i reaches a container's own stdin and output", async () => {
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'reader' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: BUSYBOX_IMAGE,
              command: ['/bin/sh', '-c', 'echo waiting; read line; echo "got: $line"'],
              stdin: true,
              stdinOnce: true,
            },
          ],
        },
      },
    });
    await podWhen(core, ns, 'reader', isReady);
    const r = await kubectl(['attach', '-i', '-n', ns, 'reader'], { input: 'over attach\n' });
    expect(r.stdout).toContain('got: over attach');
    const done = await podWhen(core, ns, 'reader', (p) => p.status?.phase === 'Succeeded');
    expect(done.status!.containerStatuses![0]!.state!.terminated!.exitCode).toBe(0);
  });

  it('kubectl port-forward reaches a port the Pod serves, several connections at once', async () => {
    const pf = await portForward('etcd', 2379);
    try {
      const started = Date.now();
      const fetches = Array.from({ length: 6 }, () =>
        fetch(`http://127.0.0.1:${pf.local}/health`, { headers: { connection: 'close' } }).then((r) => r.json()),
      );
      expect(await Promise.all(fetches)).toEqual(Array(6).fill({ health: 'true', reason: '' }));
      console.log(`six forwarded /health fetches: ${Date.now() - started} ms`);
      const version = (await (await fetch(`http://127.0.0.1:${pf.local}/version`)).json()) as { etcdserver: string };
      expect(version.etcdserver).toBe('3.6.16');
    } finally {
      pf.child.kill();
    }
  });

  it("a forwarded connection to a port nobody serves fails with the reason on kubectl's side", async () => {
    const pf = await portForward('etcd', 1);
    try {
      await expect(fetch(`http://127.0.0.1:${pf.local}/`)).rejects.toThrow();
      await until('port-forward to say connection refused', () =>
        Promise.resolve(pf.err().includes('connection refused') ? true : undefined),
      );
      // The pod named by its sandbox's ID (a real kubelet, which leaves the uid empty) or its name.
      expect(pf.err()).toMatch(/error forwarding port 1 to pod [\w-]+, uid [0-9a-f-]*: .*connection refused/);
    } finally {
      pf.child.kill();
    }
  });

  describe('a manager installed by Helm', () => {
    const release = `etcd-operator-kexec-${process.pid}`;
    const clusters = `kexec-clusters-${process.pid}`;
    const debugPort = 20000 + (process.pid % 20000);
    let home: string;
    const kubeconfig = ['--kubeconfig', inject('kubeconfig')];
    beforeAll(async () => {
      home = mkdtempSync(path.join(os.tmpdir(), 'kexec-helm-'));
      // Scoped to its namespace: other e2e files run their own managers beside this one.
      await createNamespace(core, clusters);
      const sets = [
        'listen.host=$(POD_IP)',
        'debug.enabled=true',
        `debug.port=${debugPort}`,
        `watchNamespace=${clusters}`,
      ];
      await helm(['install', release, chartDir, '-n', ns, ...sets.flatMap((s) => ['--set', s]), ...kubeconfig], {
        home,
      });
    });
    afterAll(async () => {
      // Gone before their namespace, whose deletion takes the manager's Role (and rights) with it.
      await kubectl(['delete', 'etcdclusters', '--all', '-n', clusters, '--timeout=120s']);
      await deleteNamespace(core, clusters);
      await helm(['uninstall', release, '-n', ns, '--ignore-not-found', ...kubeconfig], { home }).catch(
        () => undefined,
      );
      rmSync(home, { recursive: true, force: true });
    });

    it('kubectl exec deploy/<release> -- etcd-operator journal <cluster> prints the timeline', async () => {
      await until(
        'the release Pod Ready',
        async () => {
          const pods = (
            await core.listNamespacedPod({ namespace: ns, labelSelector: `app.kubernetes.io/instance=${release}` })
          ).items;
          return pods.find(isReady);
        },
        Infinity,
        500,
      );
      await applyManifest(
        [
          'apiVersion: etcd-operator.dev/v1alpha1',
          'kind: EtcdCluster',
          `metadata: {name: demo, namespace: ${clusters}}`,
          'spec: {replicas: 1, version: 3.6.16, storage: {size: 1Gi}}',
        ].join('\n'),
      );
      const journal = await until(
        'the journal of demo',
        async () => {
          const r = await kubectl([
            'exec',
            '-n',
            ns,
            `deploy/${release}`,
            '--',
            'etcd-operator',
            'journal',
            'demo',
            '-n',
            clusters,
          ]);
          return r.code === 0 && /EtcdMember\/demo-0 #\d+ /.test(r.stdout) ? r : undefined;
        },
        Infinity,
        2000,
      );
      expect(journal.stdout).toMatch(new RegExp(`^# EtcdCluster ${clusters}/demo \\(uid `, 'm'));
      expect(journal.stdout).toMatch(/^\S+ EtcdCluster\/demo #\d+ k8s\.cluster\.updated .* pending -> bootstrapping/m);
      expect(journal.stdout).toMatch(/^ +intent createMember\{/m);
    });

    /** etcdctl on this machine through `kubectl port-forward pod/<member> :2379`: puts a key, reads it back. */
    async function putAndGetThrough(member: string, endpoint: (port: number) => string, flags: string[] = []) {
      await until(`${member} Ready`, () =>
        core.readNamespacedPod({ namespace: clusters, name: member }).then((p) => (isReady(p) ? p : undefined)),
      );
      const buildSh = path.join(import.meta.dirname, '..', '..', 'localcluster', 'tools', 'build.sh');
      const etcdctlPath = (await run(buildSh, ['etcdctl', '3.6.16'])).stdout.trim();
      const pf = await portForward(member, 2379, clusters);
      try {
        const etcdctl = (...args: string[]) =>
          run(etcdctlPath, [`--endpoints=${endpoint(pf.local)}`, '--dial-timeout=5s', ...flags, ...args]);
        const put = await etcdctl('put', 'through-port-forward', `hello ${member}`);
        const got = await etcdctl('get', 'through-port-forward', '--print-value-only');
        return [put.stdout.trim(), got.stdout.trim()];
      } finally {
        pf.child.kill();
      }
    }

    it("kubectl port-forward pod/demo-0 2379 reaches the member (etcd listens on the Pod's loopback too): etcdctl writes and reads a key", async () => {
      expect(await putAndGetThrough('demo-0', (port) => `http://127.0.0.1:${port}`)).toEqual(['OK', 'hello demo-0']);
    });

    it('with client TLS too: etcdctl reaches https://localhost through the forwarded port with a client certificate', async () => {
      const pki = await TestPki.create('kexec-pki-');
      try {
        const kube = clientsOf(inject('kubeconfig'));
        const tls = await createClusterSecrets(kube, pki, clusters, 'secure');
        const secure = new ClusterUnderTest(kube, clusters, 'secure', tls.reach);
        await secure.create({ replicas: 1, tls: tls.spec });
        const { ca, cert, key } = tls.reach.client!;
        const flags = Object.entries({ cacert: ca, cert, key }).map(([flag, pem]) => {
          const file = path.join(pki.dir, `etcdctl-${flag}.pem`);
          writeFileSync(file, pem);
          return `--${flag}=${file}`;
        });
        expect(await putAndGetThrough('secure-0', (port) => `https://localhost:${port}`, flags)).toEqual([
          'OK',
          'hello secure-0',
        ]);
      } finally {
        pki.remove();
      }
    });

    it("kubectl port-forward deploy/<release> reaches the manager's debug page, as the chart's NOTES say", async () => {
      const pf = kubectlChild(['port-forward', '-n', ns, `deploy/${release}`, `:${debugPort}`]);
      try {
        const local = await until('kubectl port-forward to listen', () =>
          Promise.resolve(/Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(pf.out())?.[1]),
        );
        const page = await fetch(`http://127.0.0.1:${local}/api/objects`);
        expect(page.status).toBe(200);
        expect(JSON.stringify(await page.json())).toContain('demo');
      } finally {
        pf.child.kill();
      }
    });
  });
});
