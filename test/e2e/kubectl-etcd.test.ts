/**
 * `kubectl etcd` as a user runs it: the one file plugin/kubectl-etcd on PATH (a symlink, as a
 * user links it), found and run by the real kubectl (`kubectl etcd ...`), with KUBECONFIG in the
 * environment, against a real 1-member cluster: status, a snapshot to a real S3 server, restore
 * (the YAML it writes), defrag, and why and statechart through the API server's service proxy.
 * The manager runs on this machine (withManager) and the API server proxies to Pods only, so the
 * manager's Service selects a Pod of the operator's image that forwards to it: the proxy path, the
 * RBAC check and the manager's route are the real ones, the Pod stands in for the manager's own.
 * Then as krew installs it: the archive `make plugin-archive` builds (twice: one sha256), unpacked
 * alone, and installed by the pinned krew into a KREW_ROOT of its own, run, and uninstalled.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { EtcdCluster, EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { DEFAULT_AGENT_IMAGE } from '../../effects/kubernetes/index.ts';
import { buildPluginArchive, manifestWithSha256 } from '../../hack/plugin-archive.ts';
import { GROUP, PLURAL, VERSION } from '../../effects/kubernetes/meta.ts';
import { until } from '../effects/kubernetes/e2e-context.ts';
import { renderChart } from '../charts/helm.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { applyManifest } from './kube.ts';
import { withManager } from './manager-fixture.ts';
import { BUCKET, startS3 } from './s3-server.ts';

const hasNode = inject('clusterHasNode');
const env = withManager('kubectl-etcd');
const { ns, kube } = env;
const run = promisify(execFile);
const snapshots = { group: GROUP, version: VERSION, namespace: ns, plural: PLURAL.snapshot };

/** An address of this machine Pods reach: its end of a real node's link, or the process nodes' Pod bridge. */
function machineAddress(): string {
  const all = Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a && a.family === 'IPv4' && !a.internal)
    .map((a) => a!.address);
  const address = all.find((a) => a.startsWith('10.250.')) ?? all.find((a) => a === '10.244.0.1') ?? all[0];
  if (!address) throw new Error('this machine has no non-loopback IPv4 address for the manager');
  return address;
}

const address = machineAddress();
let bin: string;
let demo: ClusterUnderTest;

/** `kubectl ARGS` with the plugin on PATH and KUBECONFIG set (the admin's, or `as`), as a user's shell has them. */
async function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return kubectlAs(inject('kubeconfig'), ...args);
}

async function kubectlAs(
  kubeconfig: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return kubectlWith({ kubeconfig, path: [bin] }, ...args);
}

/** `kubectl ARGS` with the dirs of path first on PATH (where it finds plugins), and env added. */
async function kubectlWith(
  opts: { kubeconfig: string; path: readonly string[]; env?: Record<string, string> },
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const PATH = [...opts.path, path.dirname(process.execPath), path.dirname(inject('kubectlPath')), process.env.PATH];
  try {
    const r = await run(inject('kubectlPath'), args, {
      env: {
        ...process.env,
        ...opts.env,
        PATH: PATH.join(':'),
        KUBECONFIG: opts.kubeconfig,
        KUBECTL_ETCD_OPERATOR_NAMESPACE: ns,
      },
      maxBuffer: 64 * 1024 * 1024,
      timeout: 600_000,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(err) };
  }
}

describe.skipIf(!hasNode)('kubectl etcd: the plugin on PATH, run by kubectl against a real cluster', () => {
  afterAll(async () => {
    // Registered before the fixture's hooks: runs after its teardown, for finalizers a failed test left.
    const list = (await kube.custom.listNamespacedCustomObject(snapshots).catch(() => ({ items: [] }))) as {
      items: EtcdSnapshot[];
    };
    for (const s of list.items)
      await kube.custom
        .patchNamespacedCustomObject(
          { ...snapshots, name: s.metadata.name ?? '', body: { metadata: { finalizers: null } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        )
        .catch(() => undefined);
  });
  env.hooks({ args: ['--listen', `${address}:0`] });
  beforeAll(async () => {
    bin = mkdtempSync(path.join(os.tmpdir(), 'kubectl-etcd-bin-'));
    symlinkSync(path.join(import.meta.dirname, '..', '..', 'plugin', 'kubectl-etcd'), path.join(bin, 'kubectl-etcd'));
    // The manager's Service, as the chart makes it (kubectlEtcd.service). The API server proxies only to
    // Pods, and this manager runs on the machine: a Pod of the operator's image forwards to it.
    const forward = `const net = require('node:net');
      net.createServer((c) => {
        const m = net.connect(${env.manager.port}, '${address}');
        c.pipe(m).pipe(c);
        c.on('error', () => m.destroy());
        m.on('error', () => c.destroy());
      }).listen(8080);`;
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: 'manager-forward', labels: { app: 'manager-forward' } },
        spec: {
          containers: [
            {
              name: 'forward',
              image: DEFAULT_AGENT_IMAGE,
              command: ['/usr/local/bin/node', '-e', forward],
              ports: [{ name: 'http', containerPort: 8080 }],
              readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      },
    });
    await kube.core.createNamespacedService({
      namespace: ns,
      body: {
        metadata: { name: 'etcd-operator' },
        spec: { selector: { app: 'manager-forward' }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] },
      },
    });
    demo = new ClusterUnderTest(kube, ns, 'demo');
    await Promise.all([startS3(kube, ns), demo.create({ replicas: 1, storage: { size: '256Mi' } })]);
    await demo.settled(1);
    await until('the manager Service has an endpoint', async () => {
      const e = await kube.core
        .readNamespacedEndpoints({ namespace: ns, name: 'etcd-operator' })
        .catch(() => undefined);
      return (e?.subsets?.[0]?.addresses?.length ?? 0) > 0 || undefined;
    });
  });
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  it('kubectl finds the plugin on PATH, and its help', async () => {
    const list = await kubectl('plugin', 'list');
    expect(list.stdout).toContain(path.join(bin, 'kubectl-etcd'));
    const help = await kubectl('etcd', '--help');
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^usage: kubectl etcd COMMAND NAME/);
    const wrong = await kubectl('etcd', 'status');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('status: NAME is missing');
  });

  it('status: the member, the leader, health, version and the step, for people and as JSON', async () => {
    const r = await kubectl('etcd', 'status', 'demo', '-n', ns);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`EtcdCluster ${ns}/demo`);
    expect(r.stdout).toMatch(/Available: {2}True \(1 of 1 voters healthy\)/);
    expect(r.stdout).toMatch(/Members: {4}1 of 1 ready; leader demo-0/);
    expect(r.stdout).toMatch(/demo-0 \*\s+voter\s+voter\s+healthy\s+3\.6\.16/);
    expect(r.stdout).toContain('Last backup:        none (kubectl etcd snapshot NAME takes one)');
    const json = JSON.parse((await kubectl('etcd', 'status', 'demo', '-n', ns, '-o', 'json')).stdout) as {
      leader: string;
      members: { name: string; health: string; role: string }[];
      step: { resting: boolean };
    };
    expect(json).toMatchObject({ leader: 'demo-0', step: { resting: true } });
    expect(json.members).toEqual([expect.objectContaining({ name: 'demo-0', health: 'healthy', role: 'voter' })]);
    const missing = await kubectl('etcd', 'status', 'nope', '-n', ns);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not found \(kubectl get etcdclusters -n .* lists them/);
  });

  it('snapshot: creates an EtcdSnapshot to S3, shows progress, exits 0 with what was stored; status then names it', async () => {
    const r = await kubectl(
      ...['etcd', 'snapshot', 'demo', '-n', ns, '--name', 'demo-now'],
      ...['--s3', `s3://${BUCKET}/etcd/`, '--s3-credentials', 's3-credentials'],
      ...['--s3-endpoint', `http://s3.${ns}.svc:7070`, '--s3-path-style'],
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('etcdsnapshot.etcd-operator.dev/demo-now created (destination from the command line)');
    expect(r.stderr).toMatch(/^\[\d+s\] (Pending|Running)/m);
    expect(r.stdout).toMatch(
      new RegExp(`^EtcdSnapshot demo-now Succeeded: \\d+ bytes at s3://${BUCKET}/etcd/${ns}/demo/demo-now-\\w+\\.db`),
    );
    const status = await kubectl('etcd', 'status', 'demo', '-n', ns);
    expect(status.stdout).toMatch(/Last backup: {8}demo-now, \d+s ago/);
  });

  it('snapshot to a bucket that does not exist: exits 1 with the reason', async () => {
    const r = await kubectl(
      ...['etcd', 'snapshot', 'demo', '-n', ns, '--name', 'demo-nobucket'],
      ...['--s3', 's3://no-such-bucket/', '--s3-credentials', 's3-credentials', '--timeout', '4m'],
      ...['--s3-endpoint', `http://s3.${ns}.svc:7070`, '--s3-path-style'],
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/EtcdSnapshot demo-nobucket failed: .+/);
    expect(r.stderr).toContain(`kubectl describe etcdsnapshot demo-nobucket -n ${ns}`);
  });

  it('restore: the EtcdCluster that starts from the snapshot, as YAML to apply', async () => {
    const r = await kubectl('etcd', 'restore', 'demo-now', '--to', 'demo-restored', '-n', ns, '-o', 'json');
    expect(r.code, r.stderr).toBe(0);
    const c = JSON.parse(r.stdout) as EtcdCluster;
    expect(c).toMatchObject({
      kind: 'EtcdCluster',
      metadata: { name: 'demo-restored', namespace: ns },
      spec: {
        replicas: 1,
        version: '3.6.16',
        storage: { size: '256Mi' },
        bootstrap: { restore: { snapshotName: 'demo-now' } },
      },
    });
    // The API server takes it as it is (a dry run: no second cluster on the shared machine).
    await kube.custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns,
      plural: PLURAL.cluster,
      body: c,
      dryRun: 'All',
    });
  });

  it('defrag: asks the operator, which defragments the member; the spec is put back as it was', async () => {
    const r = await kubectl('etcd', 'defrag', 'demo', '-n', ns);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/asked the operator for a defragmentation run/);
    // A one-member run may start and end between two looks: the progress shown is the ask.
    expect(r.stderr).toMatch(/^\[\d+s\] asked for a run at the next minute/m);
    expect(r.stdout).toMatch(/^Defragmented True \(Completed\): freed .* on 1 member \(demo-0 .*\), scheduled for /);
    const after = await demo.get();
    expect(after.spec.maintenance).toBeUndefined();
  });

  it('why: the timeline through the service proxy, with the defragment intent and its outcome', async () => {
    const r = await kubectl('etcd', 'why', 'demo', '-n', ns);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^# EtcdCluster ${ns}/demo \\(uid [-\\w]+\\): `));
    expect(r.stdout).toMatch(/# EtcdMember .*\/demo-0/);
    expect(r.stdout).toMatch(
      /intent defragment\{member: demo-0, memberID: \w+\} #\d+\.0 -> ok \{member: demo-0, before: \d+/,
    );
    const json = JSON.parse((await kubectl('etcd', 'why', 'demo', '-n', ns, '-o', 'json', '--tail', '3')).stdout) as {
      objects: { kind: string }[];
      rows: unknown[];
    };
    expect(json.objects.map((o) => o.kind)).toContain('EtcdCluster');
    expect(json.rows.length).toBeGreaterThan(0);
  });

  it('statechart -o x.svg: the cluster chart with its path', async () => {
    const file = path.join(bin, 'demo.svg');
    const r = await kubectl('etcd', 'statechart', 'demo', '-n', ns, '-o', file);
    expect(r.code, r.stderr).toBe(0);
    const svg = readFileSync(file, 'utf8');
    expect(svg).toContain('<svg');
    expect(svg).toContain('defragmenting');
  });

  it("why as a user with the chart's journal-reader Role alone: allowed; without it: told which Role to bind", async () => {
    const role = (await renderChart({}, ns)).find(
      (o) => o.kind === 'Role' && o.metadata.name === 'etcd-operator-journal-reader',
    );
    expect(role).toBeDefined();
    await applyManifest(JSON.stringify(role));
    await applyManifest(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: ['reader', 'stranger'].map((name) => ({
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name, namespace: ns },
        })),
      }),
    );
    const bind = await kubectl(
      ...['-n', ns, 'create', 'rolebinding', 'reader-journal', '--role=etcd-operator-journal-reader'],
      `--serviceaccount=${ns}:reader`,
    );
    expect(bind.code, bind.stderr).toBe(0);
    const reader = await tokenKubeconfig('reader');
    const allowed = await kubectlAs(reader, 'etcd', 'why', 'demo', '-n', ns, '--tail', '1');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(new RegExp(`^# EtcdCluster ${ns}/demo`));
    const denied = await kubectlAs(await tokenKubeconfig('stranger'), 'etcd', 'why', 'demo', '-n', ns);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain(
      `It takes get on services/proxy for that Service: kubectl create rolebinding NAME -n ${ns} --role=etcd-operator-journal-reader --user=YOU`,
    );
  });

  it('krew: the archive built twice is one sha256, runs unpacked alone, installs by its manifest, runs status, uninstalls to nothing', async () => {
    const work = mkdtempSync(path.join(os.tmpdir(), 'kubectl-etcd-krew-'));
    try {
      const built = await buildPluginArchive(path.join(work, 'out'));
      expect((await buildPluginArchive(path.join(work, 'again'))).sha256).toBe(built.sha256);
      expect(readFileSync(built.manifest, 'utf8')).toContain(`sha256: "${built.sha256}"`);

      // Without krew: unpacked anywhere, the launcher finds the tree it came in.
      const alone = path.join(work, 'alone');
      mkdirSync(alone);
      await run('tar', ['-xzf', built.archive, '-C', alone]);
      const [top] = readdirSync(alone);
      const help = await run(path.join(alone, top!, 'plugin', 'kubectl-etcd'), ['--help'], {
        env: { ...process.env, PATH: `${path.dirname(process.execPath)}:${process.env.PATH}` },
      });
      expect(help.stdout).toMatch(/^usage: kubectl etcd COMMAND NAME/);

      // krew as a user has it: kubectl-krew on PATH, KREW_ROOT/bin after it, the index `kubectl
      // krew update` clones (here a local git repository holding the manifest, as krew-index would).
      const buildSh = path.join(import.meta.dirname, '..', '..', 'localcluster', 'tools', 'build.sh');
      const krewBin = (await run(buildSh, ['krew'], { timeout: 900_000 })).stdout.trim();
      const root = path.join(work, 'krew');
      const index = path.join(work, 'index');
      mkdirSync(path.join(index, 'plugins'), { recursive: true });
      writeFileSync(path.join(index, 'plugins', 'etcd.yaml'), readFileSync(built.manifest));
      const git = (...args: string[]) =>
        run('git', ['-c', 'user.name=test', '-c', 'user.email=test@localhost', ...args], { cwd: index });
      await git('init', '-q');
      await git('add', '.');
      await git('commit', '-qm', 'index');
      await run('git', ['clone', '-q', index, path.join(root, 'index', 'default')]);
      const krew = (...args: string[]) =>
        kubectlWith(
          {
            kubeconfig: inject('kubeconfig'),
            path: [path.dirname(krewBin), path.join(root, 'bin')],
            env: { KREW_ROOT: root, KREW_NO_UPGRADE_CHECK: '1' },
          },
          ...args,
        );

      // krew checks the archive against the manifest's sha256.
      const wrong = path.join(work, 'wrong.yaml');
      writeFileSync(wrong, manifestWithSha256(readFileSync(built.manifest, 'utf8'), 'a'.repeat(64)));
      const refused = await krew('krew', 'install', `--manifest=${wrong}`, `--archive=${built.archive}`);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`checksum does not match, want: ${'a'.repeat(64)}, got ${built.sha256}`);
      expect(readdirSync(path.join(root, 'bin'))).toEqual([]);

      const install = await krew('krew', 'install', `--manifest=${built.manifest}`, `--archive=${built.archive}`);
      expect(install.code, install.stderr).toBe(0);
      expect(install.stderr).toContain('Installed plugin: etcd');
      expect((await krew('krew', 'list')).stdout).toMatch(/(^|\/)etcd$/m);
      expect((await krew('plugin', 'list')).stdout).toContain(path.join(root, 'bin', 'kubectl-etcd'));
      const status = await krew('etcd', 'status', 'demo', '-n', ns);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`EtcdCluster ${ns}/demo`);
      expect(status.stdout).toMatch(/Available: {2}True \(1 of 1 voters healthy\)/);

      const uninstall = await krew('krew', 'uninstall', 'etcd');
      expect(uninstall.code, uninstall.stderr).toBe(0);
      for (const dir of ['bin', 'store', 'receipts']) expect(readdirSync(path.join(root, dir))).toEqual([]);
      const gone = await krew('etcd', 'status', 'demo', '-n', ns);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain('unknown command "etcd" for "kubectl"');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 900_000);
});

/** A kubeconfig of the ServiceAccount `name` of the namespace: the admin's server and CA, its token. */
async function tokenKubeconfig(name: string): Promise<string> {
  const token = (await kubectl('-n', ns, 'create', 'token', name)).stdout.trim();
  const view = JSON.parse((await kubectl('config', 'view', '--raw', '--minify', '-o', 'json')).stdout) as {
    clusters: { cluster: Record<string, string> }[];
  };
  const file = path.join(bin, `${name}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: view.clusters[0]?.cluster ?? {} }],
      users: [{ name: 'u', user: { token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'c',
    }),
    { mode: 0o600 },
  );
  return file;
}
