/**
 * The chart's values as a user meets them: a typo or a wrong type refused by helm itself
 * (values.schema.json), the etcd image, pull Secrets and requests passed on to the manager,
 * the roles aggregated into view/edit/admin, and NOTES that need no checkout.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_ETCD_VERSION } from '../../api/v1alpha1/common.ts';
import { chartDir, renderChart } from './helm.ts';
import type { KubeObject } from './helm.ts';

interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
}
const args = (objects: readonly KubeObject[]): string[] =>
  (
    objects.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { name: string; args: string[] }[] } } };
    }
  ).spec.template.spec.containers.find((c) => c.name === 'manager')!.args;
/** Every `group/resource verb` a ClusterRole grants. */
const grants = (o: KubeObject | undefined): string[] =>
  ((o as unknown as { rules: Rule[] } | undefined)?.rules ?? []).flatMap((r) =>
    r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res} ${v}`))),
  );

describe('chart values.schema.json', () => {
  test('the default values pass', async () => {
    expect((await renderChart()).length).toBeGreaterThan(0);
  });

  test.each([
    [{ replicaCount: 'two' }, "at '/replicaCount': got string, want integer"],
    [{ 'persistence.enabled': '"yes"' }, "at '/persistence/enabled': got string, want boolean"],
    [{ etcdAddress: 'ip' }, "at '/etcdAddress'"],
    [{ 'listen.port': '0' }, "at '/listen/port'"],
    [{ 'etcd.requests.memory': 'lots' }, "at '/etcd/requests/memory'"],
  ])('a wrong type or value is refused by helm: %j', async (set, message) => {
    await expect(renderChart(set)).rejects.toThrow(message);
  });

  test.each([
    [{ imagePullSecret: 'regcred' }, "at '': additional properties 'imagePullSecret' not allowed"],
    [{ 'etcd.image': 'mirror/etcd' }, "at '/etcd': additional properties 'image' not allowed"],
    [{ 'persistence.storageClass': 'fast' }, "at '/persistence': additional properties 'storageClass' not allowed"],
    [{ 'rbac.aggregate': 'false' }, "at '/rbac': additional properties 'aggregate' not allowed"],
  ])('a key that is not a value (a typo) is refused by helm: %j', async (set, message) => {
    await expect(renderChart(set)).rejects.toThrow(message);
  });

  test('every key of values.yaml has a type in the schema', () => {
    const schema = JSON.parse(readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8')) as Node;
    const values = parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const untyped = leaves(values).filter((key) => !typed(schema, key.split('.')));
    expect(untyped).toEqual([]);
  });
});

interface Node {
  readonly type?: string | string[];
  readonly $ref?: string;
  readonly properties?: Record<string, Node>;
}
/** The dotted keys of values.yaml down to a scalar, a list or a map left to Kubernetes. */
function leaves(o: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length && !/Context|resources|requests/.test(k)
      ? leaves(v as Record<string, unknown>, `${prefix}${k}.`)
      : [`${prefix}${k}`],
  );
}
function typed(schema: Node, keys: readonly string[]): boolean {
  let node: Node | undefined = schema;
  for (const k of keys) node = node?.properties?.[k];
  return node !== undefined && (node.type !== undefined || node.$ref !== undefined);
}

describe('chart: what the manager puts into etcd Pods and Jobs', () => {
  test("by default: quay.io's etcd images, members request 100m and 256Mi, Jobs 10m and 64Mi, no pull Secret", async () => {
    const a = args(await renderChart());
    expect(a).toEqual(
      expect.arrayContaining([
        '--etcd-image-repository=quay.io/coreos/etcd',
        '--member-requests=cpu=100m,memory=256Mi',
        '--job-requests=cpu=10m,memory=64Mi',
      ]),
    );
    expect(a.filter((x) => x.startsWith('--image-pull-secret'))).toEqual([]);
  });

  test('a mirror, the pull Secrets of imagePullSecrets, other requests or none', async () => {
    const a = args(
      await renderChart({
        'etcd.imageRepository': 'mirror.example:5000/coreos/etcd',
        'imagePullSecrets[0].name': 'regcred',
        'imagePullSecrets[1].name': 'mirror',
        'etcd.requests.cpu': '1',
        'jobs.requests': 'null',
      }),
    );
    expect(a).toEqual(
      expect.arrayContaining([
        '--etcd-image-repository=mirror.example:5000/coreos/etcd',
        '--image-pull-secret=regcred',
        '--image-pull-secret=mirror',
        '--member-requests=cpu=1,memory=256Mi',
        '--job-requests=',
      ]),
    );
  });
});

describe('chart: roles aggregated into view, edit and admin', () => {
  test('viewers read every kind; editors and admins change clusters, snapshots and schedules, never members', async () => {
    const objects = await renderChart();
    const view = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'etcd-operator-view');
    const edit = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'etcd-operator-edit');
    expect(view?.metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-view': 'true',
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
    expect(edit?.metadata.labels).toMatchObject({
      'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
      'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
    });
    expect(edit?.metadata.labels).not.toHaveProperty(['rbac.authorization.k8s.io/aggregate-to-view']);
    for (const kind of ['etcdclusters', 'etcdmembers', 'etcdsnapshots', 'etcdsnapshotschedules'])
      for (const verb of ['get', 'list', 'watch']) expect(grants(view)).toContain(`etcd-operator.dev/${kind} ${verb}`);
    expect(grants(view).filter((g) => !/ (get|list|watch)$/.test(g))).toEqual([]);
    for (const kind of ['etcdclusters', 'etcdsnapshots', 'etcdsnapshotschedules'])
      for (const verb of ['create', 'update', 'patch', 'delete'])
        expect(grants(edit)).toContain(`etcd-operator.dev/${kind} ${verb}`);
    expect(grants(edit)).toContain('etcd-operator.dev/etcdclusters/scale update');
    expect(grants(edit).filter((g) => g.includes('etcdmembers') || g.includes('/status'))).toEqual([]);
  });

  test('rbac.aggregateToDefaultRoles=false leaves them out', async () => {
    const objects = await renderChart({ 'rbac.aggregateToDefaultRoles': 'false' });
    expect(objects.filter((o) => JSON.stringify(o.metadata).includes('aggregate-to-'))).toEqual([]);
    expect(objects.map((o) => o.metadata.name)).not.toContain('etcd-operator-edit');
  });
});

describe('chart NOTES', () => {
  const notes = readFileSync(path.join(chartDir, 'templates', 'NOTES.txt'), 'utf8');

  test('name no file of the repository: the chart is installed from a registry', () => {
    expect(notes).not.toMatch(/examples\/|charts\/|\.yaml\b/);
  });

  test('hold an EtcdCluster to apply from stdin, at the default etcd version', () => {
    const heredoc = /apply -f - <<'EOF'\n([\s\S]*?)\n\s*EOF\n/.exec(notes)?.[1] ?? '';
    expect(heredoc).toContain('kind: EtcdCluster');
    const cluster = parse(heredoc.replace(/^ {2}/gm, '')) as {
      apiVersion: string;
      kind: string;
      spec: { version: string };
    };
    expect(cluster).toMatchObject({ apiVersion: 'etcd-operator.dev/v1alpha1', kind: 'EtcdCluster' });
    expect(cluster.spec.version).toBe(DEFAULT_ETCD_VERSION);
  });
});
