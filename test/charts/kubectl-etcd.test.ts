/** The chart's part for `kubectl etcd why` and `statechart`: a Service in front of the manager and a Role to proxy to it. */
import { describe, expect, test } from 'vitest';
import { renderChart, type KubeObject } from './helm.ts';

const NS = 'ops';
type Rendered = KubeObject & { spec?: Record<string, unknown>; rules?: unknown; subjects?: unknown; roleRef?: unknown };
const named = (objects: readonly KubeObject[], kind: string, name: string): Rendered | undefined =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

describe('chart: the journal for kubectl etcd, through the service proxy', () => {
  test('a Service named like the release on the manager port, and a Role that may proxy to it alone', async () => {
    const objects = await renderChart({}, NS);
    const svc = named(objects, 'Service', 'etcd-operator');
    expect(svc?.metadata.namespace).toBe(NS);
    expect(svc?.spec).toMatchObject({ ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
    const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    };
    expect(deployment.spec.template.metadata.labels).toMatchObject(svc?.spec?.selector as Record<string, string>);
    expect(named(objects, 'Role', 'etcd-operator-journal-reader')?.rules).toEqual([
      {
        apiGroups: [''],
        resources: ['services/proxy'],
        resourceNames: ['etcd-operator', 'etcd-operator:http'],
        verbs: ['get'],
      },
    ]);
    // Nobody is bound unless the values say.
    expect(named(objects, 'RoleBinding', 'etcd-operator-journal-reader')).toBeUndefined();
  });

  test('kubectlEtcd.readers are bound to it; kubectlEtcd.service false makes neither', async () => {
    const objects = await renderChart(
      {
        'kubectlEtcd.readers[0].kind': 'Group',
        'kubectlEtcd.readers[0].name': 'sre',
        'kubectlEtcd.readers[0].apiGroup': 'rbac.authorization.k8s.io',
      },
      NS,
    );
    const binding = named(objects, 'RoleBinding', 'etcd-operator-journal-reader');
    expect(binding?.subjects).toEqual([{ kind: 'Group', name: 'sre', apiGroup: 'rbac.authorization.k8s.io' }]);
    expect(binding?.roleRef).toMatchObject({ kind: 'Role', name: 'etcd-operator-journal-reader' });
    const off = await renderChart({ 'kubectlEtcd.service': 'false' }, NS);
    expect(named(off, 'Service', 'etcd-operator')).toBeUndefined();
    expect(named(off, 'Role', 'etcd-operator-journal-reader')).toBeUndefined();
  });
});
