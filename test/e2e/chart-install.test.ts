/**
 * `helm install` of the chart into the local cluster, as a user does it: the objects exist, the
 * ServiceAccount holds the rights the manager needs and none it must not (asked of the real API
 * server's authorizer with `kubectl auth can-i --as`), the manager's Pod is bound with its args and
 * claim, and `helm uninstall` takes it all away again. Its manager watches every namespace, so the
 * file runs alone (vitest.config.ts); the install with watchNamespace is chart-watch-namespace.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { until } from '../../localcluster/until.ts';
import { helm } from '../charts/helm.ts';
import { canIArgs, FORBIDDEN_RIGHTS, MANAGER_RIGHTS, VOLUME_NODE_RIGHTS } from '../charts/manager-rights.ts';
import { installCertManagerCrds } from '../../localcluster/cert-manager/index.ts';
import {
  canIAll,
  canIAs,
  installRelease,
  helmKubeconfig,
  podsOf,
  type ReleasePod,
  uninstallRelease,
} from './chart-release.ts';
import { getJson, kubectl } from './kube.ts';
import { isReady } from './pods.ts';

const ns = `chart-e2e-${process.pid}`;
// The release name holds the chart's, so every object is named after it (cluster-scoped ones too).
const release = `etcd-operator-e2e-${process.pid}`;
const sa = `system:serviceaccount:${ns}:${release}`;
const hasNode = inject('clusterHasNode');

let home: string;
const selector = `app.kubernetes.io/instance=${release}`;
const pods = () => podsOf(ns, release);
const canI = (verb: string, resource: string, namespace: string) => canIAs(sa, [verb, resource], namespace);

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
    notes = await installRelease(home, release, ns);
  });
  afterAll(async () => {
    await uninstallRelease(home, release, ns);
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
    const where = (want: string) => (want === 'no-elsewhere' ? 'elsewhere' : ns);
    const answers = await canIAll(asked, ([user, args, want]) => canIAs(user, args, where(want)));
    expect(asked.map(([user, args, want], i) => `${user} ${args.join(' ')} -n ${where(want)}: ${answers[i]}`)).toEqual(
      asked.map(
        ([user, args, want]) => `${user} ${args.join(' ')} -n ${where(want)}: ${want.replace('-elsewhere', '')}`,
      ),
    );
    // The NOTES' EtcdCluster, as printed, is one the API server takes from an editor (a dry run).
    const heredoc = /apply -f - <<'EOF'\n([\s\S]*?)\n\s*EOF\n/.exec(notes)?.[1]?.replace(/^ {2}/gm, '');
    expect(heredoc).toContain('kind: EtcdCluster');
    await kubectl(['apply', '--dry-run=server', '-n', ns, '--as', 'ed', '-f', '-'], { input: heredoc, check: true });
  });

  it("the manager's ServiceAccount may do what the handlers do, in any namespace, and take its Lease", async () => {
    // Every right the chart's unit test holds the ClusterRole to, asked of the API server's authorizer.
    const rights = [...MANAGER_RIGHTS, ...VOLUME_NODE_RIGHTS].flatMap(([group, resource, verbs]) =>
      verbs.split(' ').map((verb) => canIArgs(verb, group, resource)),
    );
    const answers = await canIAll(rights, (args) => canIAs(sa, args, 'anywhere'));
    expect(rights.map((args, i) => `${args.join(' ')}: ${answers[i]}`)).toEqual(
      rights.map((args) => `${args.join(' ')}: yes`),
    );
    expect(await canI('update', `leases.coordination.k8s.io/${release}`, ns)).toBe('yes');
    expect(await canI('update', `leases.coordination.k8s.io/${release}`, 'anywhere')).toBe('no');
    // Secrets by name only (spec.tls): never listed or watched.
    expect(await canI('list', 'secrets', ns)).toBe('no');
  });

  it("the manager's ServiceAccount holds nothing more: no Secret listed, no exec, no RBAC, no wildcard, not the user's specs", async () => {
    const asked = FORBIDDEN_RIGHTS.flatMap(([verb, resource, sub]) =>
      [ns, 'anywhere'].map((namespace) => ({
        args: [verb, resource, ...(sub ? [`--subresource=${sub}`] : [])],
        namespace,
      })),
    );
    const answers = await canIAll(asked, (q) => canIAs(sa, q.args, q.namespace));
    expect(asked.filter((_, i) => answers[i] !== 'no').map((q) => `${q.args.join(' ')} -n ${q.namespace}`)).toEqual([]);
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
    const started = (p: ReleasePod) =>
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
    await helm(['uninstall', release, '-n', ns, '--wait', '--timeout', '2m', ...helmKubeconfig()], { home });
    for (const kind of ['deployment', 'serviceaccount', 'pvc'])
      expect((await kubectl(['get', kind, '-n', ns, '-l', selector, '-o', 'name'])).stdout).toBe('');
    expect((await kubectl(['get', 'clusterrole', release, '--ignore-not-found', '-o', 'name'])).stdout).toBe('');
    await until('no manager Pod left', async () => ((await pods()).length === 0 ? true : undefined), Infinity, 500);
  });
});
