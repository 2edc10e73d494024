/**
 * `helm install` of the chart into the local cluster, as a user does it: the objects exist, the
 * ServiceAccount holds the rights the manager needs and none it must not (asked of the real API
 * server's authorizer with `kubectl auth can-i --as`), the manager's
 * Pod is bound with its args and claim, and `helm uninstall` takes it all away again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until, untilGone } from '../../localcluster/until.ts';
import { clientsOf } from '../effects/kubernetes/e2e-context.ts';
import { ClusterUnderTest } from './etcd-cluster.ts';
import { chartDir, helm } from '../charts/helm.ts';
import { canIArgs, FORBIDDEN_RIGHTS, MANAGER_RIGHTS, VOLUME_NODE_RIGHTS } from '../charts/manager-rights.ts';
import { installCertManagerCrds } from '../../localcluster/cert-manager/index.ts';
import { getJson, kubectl } from './kube.ts';

const ns = `chart-e2e-${process.pid}`;
// The release name holds the chart's, so every object is named after it (cluster-scoped ones too).
const release = `etcd-operator-e2e-${process.pid}`;
const sa = `system:serviceaccount:${ns}:${release}`;
const hasNode = inject('clusterHasNode');

interface Pod {
  metadata: { name: string };
  spec: {
    nodeName?: string;
    serviceAccountName: string;
    containers: { name: string; image: string; args: string[] }[];
  };
  status: {
    phase: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { restartCount: number; state: Record<string, unknown> }[];
  };
}

let home: string;
const kubeconfig = () => ['--kubeconfig', inject('kubeconfig')];
const selector = `app.kubernetes.io/instance=${release}`;
const podsOf = async (namespace: string, instance: string) =>
  (await getJson<{ items: Pod[] }>(['pods', '-n', namespace, '-l', `app.kubernetes.io/instance=${instance}`])).items;
const pods = () => podsOf(ns, release);
const isReady = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
/** `kubectl auth can-i` as user: args are the verb, the resource (or resource/name) and any flags such as --subresource. */
const canIAs = async (user: string, args: readonly string[], namespace: string) =>
  (await kubectl(['auth', 'can-i', ...args, '-n', namespace, '--as', user])).stdout.trim();
const canI = (verb: string, resource: string, namespace: string) => canIAs(sa, [verb, resource], namespace);
// The local node runs every Pod on the host's network: the manager must bind its Pod IP.
const install = (name: string, namespace: string, ...sets: string[]) =>
  helm(
    [
      'install',
      name,
      chartDir,
      '-n',
      namespace,
      '--create-namespace',
      ...['listen.host=$(POD_IP)', ...sets].flatMap((v) => ['--set', v]),
      ...kubeconfig(),
    ],
    { home },
  );

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'chart-e2e-'));
  // The manager's rights on cert-manager's Certificates are asked of the authorizer by name, which
  // kubectl resolves only for a kind the API server serves: as on a cluster that runs cert-manager.
  await installCertManagerCrds(inject('kubeconfig'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('chart: helm install into the local cluster', () => {
  let notes: string;
  beforeAll(async () => {
    notes = await install(release, ns);
  });
  afterAll(async () => {
    await helm(['uninstall', release, '-n', ns, '--ignore-not-found', ...kubeconfig()], { home }).catch(
      () => undefined,
    );
    await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']);
  });

  it('creates the manager objects and prints how to apply the example and read the journal', async () => {
    for (const kind of ['serviceaccount', 'deployment', 'service', 'role', 'rolebinding'])
      await getJson([
        kind,
        '-n',
        ns,
        kind === 'service' ? `${release}-metrics` : kind.startsWith('role') ? `${release}-leader-election` : release,
      ]);
    await getJson(['clusterrole', release]);
    await getJson(['clusterrolebinding', release]);
    await getJson(['persistentvolumeclaim', '-n', ns, `${release}-journal`]);
    expect(notes).toContain("apply -f - <<'EOF'");
    expect(notes).toContain(`exec deploy/${release} -- etcd-operator journal demo`);
  });

  it("a namespace's editors and viewers use the kinds through the aggregated roles; EtcdMembers stay the operator's", async () => {
    await kubectl(['create', 'rolebinding', 'editors', '--clusterrole=edit', '--user=ed', '-n', ns], { check: true });
    await kubectl(['create', 'rolebinding', 'viewers', '--clusterrole=view', '--user=vi', '-n', ns], { check: true });
    // kube-controller-manager's aggregation controller copies the chart's rules into edit and view.
    const cluster = 'etcdclusters.etcd-operator.dev';
    await until('the edit role aggregated', async () =>
      (await canIAs('ed', ['create', cluster], ns)) === 'yes' ? true : undefined,
    );
    await until('the view role aggregated', async () =>
      (await canIAs('vi', ['list', cluster], ns)) === 'yes' ? true : undefined,
    );
    const asked: [string, string[], string][] = [
      ['ed', ['create', 'etcdsnapshots.etcd-operator.dev'], 'yes'],
      ['ed', ['delete', 'etcdsnapshotschedules.etcd-operator.dev'], 'yes'],
      ['ed', ['patch', cluster, '--subresource=scale'], 'yes'],
      ['ed', ['get', 'etcdmembers.etcd-operator.dev'], 'yes'],
      ['ed', ['delete', 'etcdmembers.etcd-operator.dev'], 'no'],
      ['ed', ['patch', cluster, '--subresource=status'], 'no'],
      ['ed', ['create', cluster], 'yes'],
      ['vi', ['get', 'etcdmembers.etcd-operator.dev'], 'yes'],
      ['vi', ['create', cluster], 'no'],
      ['vi', ['list', cluster], 'no-elsewhere'],
    ];
    for (const [user, args, want] of asked) {
      const where = want === 'no-elsewhere' ? 'elsewhere' : ns;
      const answer = await canIAs(user, args, where);
      expect(`${user} ${args.join(' ')} -n ${where}: ${answer}`).toBe(
        `${user} ${args.join(' ')} -n ${where}: ${want === 'no-elsewhere' ? 'no' : want}`,
      );
    }
    // The NOTES' EtcdCluster, as printed, is one the API server takes from an editor (a dry run).
    const heredoc = /apply -f - <<'EOF'\n([\s\S]*?)\n\s*EOF\n/.exec(notes)?.[1]?.replace(/^ {2}/gm, '');
    expect(heredoc).toContain('kind: EtcdCluster');
    await kubectl(['apply', '--dry-run=server', '-n', ns, '--as', 'ed', '-f', '-'], { input: heredoc, check: true });
  });

  it("the manager's ServiceAccount may do what the handlers do, in any namespace, and take its Lease", async () => {
    // Every right the chart's unit test holds the ClusterRole to, asked of the API server's authorizer.
    for (const [group, resource, verbs] of [...MANAGER_RIGHTS, ...VOLUME_NODE_RIGHTS])
      for (const verb of verbs.split(' ')) {
        const args = canIArgs(verb, group, resource);
        expect(`${args.join(' ')}: ${await canIAs(sa, args, 'anywhere')}`).toBe(`${args.join(' ')}: yes`);
      }
    expect(await canI('update', `leases.coordination.k8s.io/${release}`, ns)).toBe('yes');
    expect(await canI('update', `leases.coordination.k8s.io/${release}`, 'anywhere')).toBe('no');
    // Secrets by name only (spec.tls): never listed or watched.
    expect(await canI('list', 'secrets', ns)).toBe('no');
  });

  it("the manager's ServiceAccount holds nothing more: no Secret listed, no exec, no RBAC, no wildcard, not the user's specs", async () => {
    const held: string[] = [];
    for (const [verb, resource, sub] of FORBIDDEN_RIGHTS)
      for (const namespace of [ns, 'anywhere']) {
        const args = [verb, resource, ...(sub ? [`--subresource=${sub}`] : [])];
        if ((await canIAs(sa, args, namespace)) !== 'no') held.push(`${args.join(' ')} -n ${namespace}`);
      }
    expect(held).toEqual([]);
    // Rights the handlers do not use are gone too (the chart had them before; patching a claim
    // came back with growing volumes, and is in MANAGER_RIGHTS).
    for (const [verb, resource] of [
      ['update', 'persistentvolumeclaims'],
      ['update', 'services'],
      ['list', 'services'],
      ['update', 'etcdmembers.etcd-operator.dev'],
    ])
      expect(`${verb} ${resource}: ${await canI(verb!, resource!, 'anywhere')}`).toBe(`${verb} ${resource}: no`);
    // What the authorizer lists for the ServiceAccount in a namespace has no wildcard in it.
    const list = await kubectl(['auth', 'can-i', '--list', '-n', 'anywhere', '--as', sa], { check: true });
    const own = list.stdout.split('\n').filter((l) => /etcd-operator|pods|jobs|persistentvolumeclaims/.test(l));
    expect(own.length).toBeGreaterThan(0);
    expect(own.filter((l) => l.includes('*'))).toEqual([]);
  });

  it('the manager Pod runs `etcd-operator manager` as its ServiceAccount, bound to the node with its journal claim', async () => {
    const pod = hasNode
      ? await until('a manager Pod on a node', async () => (await pods()).find((p) => p.spec.nodeName))
      : await until('a manager Pod', async () => (await pods())[0]);
    expect(pod.spec.serviceAccountName).toBe(release);
    const manager = pod.spec.containers.find((c) => c.name === 'manager')!;
    expect(manager.image).toMatch(/etcd-operator:/);
    expect(manager.args).toEqual(
      expect.arrayContaining(['manager', '--listen=$(POD_IP):8080', `--lease-namespace=${ns}`, '--leader-elect=true']),
    );
    if (!hasNode) return;
    const pvc = await until(
      'the journal claim',
      async () => {
        const claim = await getJson<{ status: { phase: string } }>(['pvc', '-n', ns, `${release}-journal`]);
        return claim.status.phase === 'Bound' ? claim : undefined;
      },
      Infinity,
      500,
    );
    expect(pvc.status.phase).toBe('Bound');
    // The node found the image and started the container (running, or exited and restarted): the chart's part is done.
    const started = (p: Pod) =>
      p.status.containerStatuses?.some((c) => 'running' in c.state || 'terminated' in c.state || c.restartCount > 0);
    await until('a manager Pod started', async () => ((await pods()).some(started) ? true : undefined), Infinity, 500);
  });

  it.runIf(hasNode)(
    'the manager Pod becomes Ready (leading, caches synced) and its log shows the journal and Lease the chart gave it',
    async () => {
      const ready = await until('a manager Pod Ready', async () => (await pods()).find(isReady), Infinity, 500);
      const logs = await kubectl(['logs', '-n', ns, ready.metadata.name, '-c', 'manager'], { check: true });
      const lines = logs.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({ manager: ready.metadata.name, journal: '/var/lib/etcd-operator/journal.db' }),
      );
      expect(lines).toContainEqual(expect.objectContaining({ lease: `${ns}/${release}` }));
    },
  );

  it('helm uninstall removes the objects and the Pod', async () => {
    await helm(['uninstall', release, '-n', ns, '--wait', '--timeout', '2m', ...kubeconfig()], { home });
    for (const kind of ['deployment', 'serviceaccount', 'pvc'])
      expect((await kubectl(['get', kind, '-n', ns, '-l', selector, '-o', 'name'])).stdout).toBe('');
    expect((await kubectl(['get', 'clusterrole', release, '--ignore-not-found', '-o', 'name'])).stdout).toBe('');
    await until('no manager Pod left', async () => ((await pods()).length === 0 ? true : undefined), Infinity, 500);
  });
});

describe('chart: helm install with watchNamespace', () => {
  const releaseNs = `${ns}-home`;
  const watched = `${ns}-watched`;
  const name = `etcd-operator-ns-${process.pid}`;
  beforeAll(async () => {
    await kubectl(['create', 'namespace', watched], { check: true });
    await install(name, releaseNs, `watchNamespace=${watched}`);
  });
  afterAll(async () => {
    await helm(['uninstall', name, '-n', releaseNs, '--ignore-not-found', ...kubeconfig()], { home }).catch(
      () => undefined,
    );
    await kubectl(['delete', 'namespace', releaseNs, watched, '--ignore-not-found', '--wait=false']);
  });

  it.runIf(hasNode)('the manager becomes Ready on a Role in the watched namespace alone', async () => {
    const user = `system:serviceaccount:${releaseNs}:${name}`;
    expect(await canIAs(user, ['watch', 'etcdclusters.etcd-operator.dev'], watched)).toBe('yes');
    expect(await canIAs(user, ['create', 'pods'], watched)).toBe('yes');
    expect(await canIAs(user, ['create', 'pods'], 'elsewhere')).toBe('no');
    expect(await canIAs(user, ['list', 'secrets'], watched)).toBe('no');
    expect(await canIAs(user, ['update', `leases.coordination.k8s.io/${name}`], releaseNs)).toBe('yes');
    const ready = await until(
      `a Ready Pod of ${name}`,
      async () => (await podsOf(releaseNs, name)).find(isReady),
      Infinity,
      500,
    );
    expect(ready.spec.containers[0]!.args).toContain(`--namespace=${watched}`);
  });

  const kube = clientsOf(inject('kubeconfig'));
  const three = new ClusterUnderTest(kube, watched, 'three');
  const one = new ClusterUnderTest(kube, watched, 'one');

  it.runIf(hasNode)(
    'kubectl describe etcdcluster reads as a story: the step to resume from is one shortened annotation line, not a context in the status',
    { timeout: 300_000 },
    async () => {
      await Promise.all([three.create({ replicas: 3 }), one.create({ replicas: 1 })]);
      await Promise.all([three.settled(3), one.settled(1)]);
      const { stdout } = await kubectl(['describe', 'etcdcluster', 'three', '-n', watched], { check: true });
      console.log(`kubectl describe etcdcluster three (${stdout.length} characters):\n${stdout}`);
      expect(stdout).toMatch(/etcd-operator\.dev\/resume:\n\s+\{"sequence":\d+,"state":"steady","intents":\[/);
      expect(stdout).not.toMatch(/^\s+Context:/m);
      const longest = Math.max(...stdout.split('\n').map((l) => l.length));
      expect(longest, 'the longest line').toBeLessThan(400);
    },
  );

  // Issue 25: the Role and RoleBinding go with the namespace, in no order; the release ClusterRole
  // keeps the rights to release the finalizers, so the namespace goes.
  it.runIf(hasNode)(
    'deleting the watched namespace with clusters in it finishes: the EtcdMembers release their finalizers',
    { timeout: 420_000 },
    async () => {
      await Promise.all([three.settled(3), one.settled(1)]);
      const started = performance.now();
      await kube.core.deleteNamespace({ name: watched });
      await untilGone(`namespace ${watched}`, () => kube.core.readNamespace({ name: watched }));
      console.log(`watched namespace ${watched} gone ${Math.round(performance.now() - started)} ms after its deletion`);
      const ready = (await podsOf(releaseNs, name)).find(isReady);
      expect(ready, 'the manager still runs').toBeDefined();
      const logs = await kubectl(['logs', '-n', releaseNs, ready!.metadata.name, '-c', 'manager'], { check: true });
      const forbidden = logs.stdout.split('\n').filter((l) => l.includes('403') && l.includes('etcdmembers'));
      expect(forbidden, 'no EtcdMember write refused for want of rights').toEqual([]);
    },
  );
});
