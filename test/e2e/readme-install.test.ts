/**
 * The README's "Install on your Kubernetes", run as written on the local cluster's real nodes:
 * `make image`, `make push` to a registry, `helm install` of the chart from it, the example
 * EtcdCluster applied, waited Available and read with kubectl. The commands are the README's
 * own, taken between its install markers (test/e2e/readme.ts), run by bash in the checkout;
 * only the line that sets REGISTRY (the user's `ghcr.io/YOU`) names the local registry instead.
 *
 * That registry is the one the nodes pull from, fronted with TLS as a user's is: the README's
 * `helm install oci://...` has no `--plain-http`, so the local registry (plain HTTP) is reached
 * through a TLS endpoint on 127.0.0.1 whose CA the commands trust by SSL_CERT_FILE (Go's tools,
 * helm and crane, read it). A node pulls `127.0.0.1:PORT/e2e/...` from the same registry at the
 * same path (containerd's `_default` hosts.toml, localcluster/realnode/config.ts), so the
 * manager, and the agent its members' init containers run, come from the image `make image`
 * built, pulled from the registry by a real node.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BuiltImage } from '../../hack/image/build.ts';
import { helm, helmPath } from '../charts/helm.ts';
import { TestPki } from '../effects/etcd/test-pki.ts';
import { until } from '../../localcluster/until.ts';
import { getJson, kubectl } from './kube.ts';
import { installCommands, withRegistry } from './readme.ts';

const repo = path.join(import.meta.dirname, '..', '..');
const registryHost = inject('registryHost');
const hasNode = inject('clusterHasNode');
// The README's names: the release, its namespace, the example cluster (in the default namespace).
const NS = 'etcd-operator-system';
const RELEASE = 'etcd-operator';
const CLUSTER = 'demo';
const kubeconfig = () => ['--kubeconfig', inject('kubeconfig')];

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string; containers: { name: string; image: string }[] };
  status: {
    initContainerStatuses?: { name: string; image: string; imageID: string }[];
    containerStatuses?: { name: string; image: string; imageID: string; ready: boolean }[];
  };
}

/**
 * An HTTPS endpoint on 127.0.0.1 in front of the registry at `target` (HOST:PORT, plain HTTP),
 * as a registry behind a TLS-terminating proxy is deployed: X-Forwarded-Proto tells it to write
 * its upload URLs (Location) with https.
 */
async function tlsFront(target: string, cert: string, key: string): Promise<{ host: string; close(): Promise<void> }> {
  const [host, port] = target.split(':');
  const agent = new http.Agent({ keepAlive: true });
  const server = https.createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    const headers = { ...req.headers, 'x-forwarded-proto': 'https' };
    const upstream = http.request({ host, port, agent, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (err) => res.destroy(err));
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: listening } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${listening}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

/** Runs `script` with bash (-e, -u, pipefail, -x: each command echoed) in the checkout; its output, stdout and stderr in order. */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-x', '-e', '-u', '-o', 'pipefail', '-c', script], {
      cwd: repo,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!hasNode)("README: 'Install on your Kubernetes', run as written against the local registry", () => {
  let home: string;
  let hadBuild: boolean;
  let pki: TestPki;
  let front: Awaited<ReturnType<typeof tlsFront>>;
  let registry: string;
  let output = '';
  let built: BuiltImage;

  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'readme-install-'));
    // make image writes build/image in the checkout: removed after unless a build was there before.
    hadBuild = existsSync(path.join(repo, 'build', 'image'));
    pki = await TestPki.create('readme-registry-');
    const leaf = await pki.issue({
      name: 'registry',
      subject: '/CN=registry',
      usage: 'serverAuth',
      sans: ['IP:127.0.0.1'],
    });
    front = await tlsFront(registryHost, leaf.cert, leaf.key);
    registry = `${front.host}/e2e`;
  });

  afterAll(async () => {
    // The cluster first, while its operator runs to remove the members; then the release, then its namespace.
    await kubectl(['delete', 'etcdcluster', CLUSTER, '--ignore-not-found', '--timeout=3m']);
    await helm(['uninstall', RELEASE, '-n', NS, '--ignore-not-found', '--wait', '--timeout', '2m', ...kubeconfig()], {
      home,
      timeoutMs: 180_000,
    }).catch((err: unknown) => console.log(String(err)));
    await kubectl(['delete', 'namespace', NS, '--ignore-not-found', '--timeout=3m']);
    await front?.close();
    pki?.remove();
    if (home) rmSync(home, { recursive: true, force: true });
    if (hadBuild === false) rmSync(path.join(repo, 'build', 'image'), { recursive: true, force: true });
  }, 600_000);

  /** The commands' environment: the pinned kubectl and helm first on PATH, the cluster, the registry's CA. */
  function scriptEnv(helmBin: string): NodeJS.ProcessEnv {
    // SSL_CERT_FILE replaces Go's system roots: Mozilla's (as Node carries them) and the registry's CA.
    const bundle = path.join(home, 'ca-bundle.crt');
    writeFileSync(bundle, [...tls.rootCertificates, readFileSync(path.join(pki.dir, 'ca.crt'), 'utf8')].join('\n'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: [path.dirname(inject('kubectlPath')), path.dirname(helmBin), process.env.PATH].join(':'),
      KUBECONFIG: inject('kubeconfig'),
      SSL_CERT_FILE: bundle,
      HELM_CACHE_HOME: path.join(home, 'helm', 'cache'),
      HELM_CONFIG_HOME: path.join(home, 'helm', 'config'),
      HELM_DATA_HOME: path.join(home, 'helm', 'data'),
      KUBECACHEDIR: path.join(home, 'kube-cache'),
    };
    for (const k of Object.keys(env)) if (k.startsWith('VITEST') || k === 'NODE_ENV') delete env[k];
    return env;
  }

  it('the commands run to the end: image built and pushed with the chart, the chart installed from the registry, demo Available', async () => {
    const helmBin = await helmPath();
    const script = withRegistry(installCommands(readFileSync(path.join(repo, 'README.md'), 'utf8')), registry);
    const result = await bash(script, scriptEnv(helmBin));
    output = result.output;
    writeFileSync(path.join(home, 'output.log'), output);
    console.log(output);
    expect(`exit ${result.code}: ${output.slice(-3000)}`).toMatch(/^exit 0:/);
    built = JSON.parse(readFileSync(path.join(repo, 'build', 'image', 'image.json'), 'utf8')) as BuiltImage;
    // make push read both back from the registry: the digest make image printed, the chart pushed.
    expect(output).toContain(`digest ${built.digest}`);
    expect(output).toContain(`image ${registry}/etcd-operator:${built.tag}@${built.digest}`);
    expect(output).toMatch(new RegExp(`deployment "${RELEASE}" successfully rolled out`));
    expect(output).toContain(`etcdcluster.etcd-operator.dev/${CLUSTER} condition met`);
  }, 1_200_000);

  it('kubectl get lists demo (3 desired, 3.6.16, members ready) and its members; kubectl describe says Available', () => {
    // What the README's `kubectl get etcdclusters,etcdmembers` printed (bash -x echoes each command first).
    const get = output.split('+ kubectl get etcdclusters,etcdmembers\n')[1]?.split('\n+ ')[0] ?? '';
    const ready = new RegExp(`^etcdcluster\\.etcd-operator\\.dev/${CLUSTER}\\s+(\\d+)\\s+3\\s+3\\.6\\.16\\s`, 'm').exec(
      get,
    );
    // The install waited for all 3 members ready, not only for Available (which the seed alone gives).
    expect(Number(ready?.[1])).toBe(3);
    expect(get).toMatch(new RegExp(`^etcdmember\\.etcd-operator\\.dev/${CLUSTER}-0\\s+${CLUSTER}\\s`, 'm'));
    const describe = output.split(`+ kubectl describe etcdcluster ${CLUSTER}\n`)[1] ?? '';
    expect(describe).toMatch(/Status:\s+True\n\s+Type:\s+Available\n/);
  });

  it('the manager runs on a real node from the image make image built, pulled from the registry', async () => {
    const pods = await getJson<{ items: Pod[] }>(['pods', '-n', NS, '-l', `app.kubernetes.io/instance=${RELEASE}`]);
    const manager = pods.items.find((p) => p.status.containerStatuses?.some((c) => c.name === 'manager' && c.ready));
    expect(manager?.spec.nodeName).toMatch(/^node-[a-c]$/);
    const status = manager!.status.containerStatuses!.find((c) => c.name === 'manager')!;
    expect(status.image).toBe(`${registry}/etcd-operator:${built.tag}`);
    expect(status.imageID).toBe(`${registry}/etcd-operator@${built.digest}`);
  });

  it("demo grows to 3 of 3; each member's check-data init container runs the same image, etcd its upstream name", async () => {
    await until('demo at 3 of 3 ready members', async () => {
      const c = await getJson<{ status?: { readyMembers?: number } }>(['etcdcluster', CLUSTER]);
      return c.status?.readyMembers === 3 ? true : undefined;
    });
    const pods = await getJson<{ items: Pod[] }>(['pods', '-l', `etcd-operator.dev/cluster=${CLUSTER}`]);
    expect(pods.items).toHaveLength(3);
    for (const pod of pods.items) {
      expect(pod.spec.nodeName).toMatch(/^node-[a-c]$/);
      expect(pod.status.initContainerStatuses?.map((c) => c.imageID)).toEqual([
        `${registry}/etcd-operator@${built.digest}`,
      ]);
      expect(pod.spec.containers.find((c) => c.name === 'etcd')?.image).toBe('quay.io/coreos/etcd:v3.6.16');
    }
  });
});
