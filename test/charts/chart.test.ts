/**
 * The chart, rendered by the real Helm: what a user installing it gets with the default values,
 * with one watched namespace and without persistence.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { chartDir, helm, renderChart } from './helm.ts';
import type { KubeObject } from './helm.ts';
import { MANAGER_RIGHTS, VOLUME_NODE_RIGHTS } from './manager-rights.ts';

const NS = 'ops';
const appVersion = (parse(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8')) as { appVersion: string })
  .appVersion;
const image = `ghcr.io/etcd-operator/etcd-operator:${appVersion}`;

interface Rule {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames?: readonly string[];
}
interface Container {
  readonly name: string;
  readonly image: string;
  readonly args: readonly string[];
  readonly env: readonly { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  readonly ports: readonly { name: string; containerPort: number }[];
  readonly volumeMounts: readonly { name: string; mountPath: string }[];
  readonly [probe: string]: unknown;
}
interface PodSpec {
  readonly serviceAccountName: string;
  readonly containers: readonly Container[];
  readonly volumes: readonly { name: string; persistentVolumeClaim?: { claimName: string }; emptyDir?: object }[];
  readonly securityContext: Record<string, unknown>;
}

/** The single object of a kind (and name, when given); fails when there is not exactly one. */
function one(objects: readonly KubeObject[], kind: string, name?: string): KubeObject & Record<string, unknown> {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found.map((o) => `${o.kind}/${o.metadata.name}`)).toHaveLength(1);
  return found[0]!;
}
function podSpec(objects: readonly KubeObject[]): PodSpec {
  return (one(objects, 'Deployment') as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
}
function manager(objects: readonly KubeObject[]): Container {
  return podSpec(objects).containers.find((c) => c.name === 'manager')!;
}
/** Whether some rule grants verb on group/resource (for the object named, when given). */
function allows(rules: readonly Rule[], group: string, resource: string, verb: string, name?: string): boolean {
  return rules.some(
    (r) =>
      r.apiGroups.includes(group) &&
      r.resources.includes(resource) &&
      r.verbs.includes(verb) &&
      (r.resourceNames === undefined || (name !== undefined && r.resourceNames.includes(name))),
  );
}
function rulesOf(o: KubeObject): Rule[] {
  return (o as unknown as { rules: Rule[] }).rules;
}

/** Every (group, resource, verb) the rules grant, as `group/resource verb`, sorted. */
function grants(rules: readonly Rule[]): string[] {
  return rules
    .flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res} ${v}`))))
    .sort();
}
const neededGrants = grants(
  MANAGER_RIGHTS.map(([g, r, v]) => ({ apiGroups: [g], resources: [r], verbs: v.split(' ') })),
);

test('chart: helm lint passes', async () => {
  await helm(['lint', '--strict', chartDir]);
});

describe('chart with the default values', () => {
  let objects: KubeObject[];
  beforeAll(async () => {
    objects = await renderChart({}, NS);
  });

  test('runs `etcd-operator manager` from the chart image with the journal, listen, lease and agent flags', () => {
    const c = manager(objects);
    expect(c.image).toBe(image);
    expect(c.args).toEqual([
      'manager',
      '--journal=/var/lib/etcd-operator/journal.db',
      '--listen=:8080',
      '--leader-elect=true',
      '--lease-name=etcd-operator',
      `--lease-namespace=${NS}`,
      '--etcd-address=dns',
      `--agent-image=${image}`,
      '--etcd-image-repository=quay.io/coreos/etcd',
      '--member-requests=cpu=100m,memory=256Mi',
      '--job-requests=cpu=10m,memory=64Mi',
      '--log-level=info',
    ]);
    const env = Object.fromEntries(c.env.map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
    expect(env).toMatchObject({
      POD_NAME: 'metadata.name',
      POD_NAMESPACE: 'metadata.namespace',
      ETCD_OPERATOR_JOURNAL: '/var/lib/etcd-operator/journal.db',
    });
  });

  test('one replica replaced with Recreate, so there is one journal writer', () => {
    const spec = (one(objects, 'Deployment') as unknown as { spec: { replicas: number; strategy: { type: string } } })
      .spec;
    expect(spec.replicas).toBe(1);
    expect(spec.strategy.type).toBe('Recreate');
  });

  test('the journal directory is a 1Gi ReadWriteOnce claim of the default StorageClass', () => {
    const pvc = one(objects, 'PersistentVolumeClaim') as unknown as {
      metadata: { name: string; namespace: string };
      spec: Record<string, unknown>;
    };
    expect(pvc.metadata.namespace).toBe(NS);
    expect(pvc.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
    const journal = podSpec(objects).volumes.find((v) => v.name === 'journal');
    expect(journal?.persistentVolumeClaim?.claimName).toBe(pvc.metadata.name);
    expect(manager(objects).volumeMounts).toContainEqual({ name: 'journal', mountPath: '/var/lib/etcd-operator' });
  });

  test('probes: liveness and startup on /healthz, readiness on /readyz, at the listen port', () => {
    const c = manager(objects);
    expect(c.ports).toContainEqual(expect.objectContaining({ name: 'http', containerPort: 8080 }));
    expect(c.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http' } });
    expect(c.startupProbe).toMatchObject({ httpGet: { path: '/healthz', port: 'http' } });
    expect(c.readinessProbe).toMatchObject({ httpGet: { path: '/readyz', port: 'http' } });
  });

  test('runs as its own ServiceAccount, non-root, read-only root, no capabilities, seccomp RuntimeDefault', () => {
    const sa = one(objects, 'ServiceAccount');
    const spec = podSpec(objects);
    expect(spec.serviceAccountName).toBe(sa.metadata.name);
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(manager(objects).securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  test('a ClusterRole bound to the ServiceAccount grants exactly the verbs the handlers use, and Secrets by name only', () => {
    const role = one(objects, 'ClusterRole', 'etcd-operator');
    expect(grants(rulesOf(role))).toEqual(neededGrants);
    // Secrets by name only: never listed or watched, so the manager sees none it is not pointed at.
    for (const verb of ['list', 'watch', 'create', 'update', 'patch', 'delete'])
      expect(allows(rulesOf(role), '', 'secrets', verb), `${verb} secrets`).toBe(false);
    // Events are written as core/v1 Events only.
    expect(allows(rulesOf(role), 'events.k8s.io', 'events', 'create')).toBe(false);
    const binding = one(objects, 'ClusterRoleBinding', 'etcd-operator') as unknown as {
      roleRef: { kind: string; name: string };
      subjects: unknown[];
    };
    expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: role.metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'etcd-operator', namespace: NS }]);
  });

  test('a Role in the release namespace lets it create, get and update its Lease', () => {
    const role = one(objects, 'Role', 'etcd-operator-leader-election');
    expect(role.metadata.namespace).toBe(NS);
    for (const verb of ['get', 'create', 'update'])
      expect(allows(rulesOf(role), 'coordination.k8s.io', 'leases', verb, 'etcd-operator')).toBe(true);
    const binding = one(objects, 'RoleBinding', 'etcd-operator-leader-election') as unknown as {
      metadata: { namespace: string };
      roleRef: { name: string };
    };
    expect(binding.metadata.namespace).toBe(NS);
    expect(binding.roleRef.name).toBe(role.metadata.name);
  });

  test('a metrics Service sends to the manager port', () => {
    const svc = one(objects, 'Service', 'etcd-operator-metrics') as unknown as {
      spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
    };
    expect(svc.spec.ports).toEqual([expect.objectContaining({ port: 8080, targetPort: 'http' })]);
    const labels = (
      one(objects, 'Deployment') as unknown as { spec: { template: { metadata: { labels: Record<string, string> } } } }
    ).spec.template.metadata.labels;
    expect(labels).toMatchObject(svc.spec.selector);
  });
});

describe('chart RBAC: least privilege', () => {
  test.each([
    ['the default values', {}],
    ['watchNamespace', { watchNamespace: 'apps' }],
    ['leader election off', { 'leaderElection.enabled': 'false' }],
  ])(
    'with %s, no rule has a wildcard verb, resource or API group, and Secrets are only read by name',
    async (_, values) => {
      const roles = (await renderChart(values, NS)).filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole');
      expect(roles.length).toBeGreaterThan(0);
      for (const role of roles)
        for (const r of rulesOf(role)) {
          const where = `${role.kind}/${role.metadata.name} ${JSON.stringify(r)}`;
          for (const field of [r.verbs, r.resources, r.apiGroups]) expect(field, where).not.toContain('*');
          if (r.resources.some((res) => res === 'secrets' || res.startsWith('secrets/')))
            expect(r, where).toMatchObject({ apiGroups: [''], resources: ['secrets'], verbs: ['get'] });
          expect((r as { nonResourceURLs?: unknown }).nonResourceURLs, where).toBeUndefined();
        }
    },
  );
});

describe('chart with the debug page', () => {
  test('off by default; debug.enabled serves it on 127.0.0.1:8081 (port-forward only), a port of its own', async () => {
    const off = manager(await renderChart({}, NS));
    expect(off.args.some((a) => a.startsWith('--debug-listen'))).toBe(false);
    expect(off.ports.map((p) => p.name)).toEqual(['http']);

    const objects = await renderChart({ 'debug.enabled': 'true' }, NS);
    const on = manager(objects);
    expect(on.args).toContain('--debug-listen=127.0.0.1:8081');
    expect(on.args).toContain('--listen=:8080');
    expect(on.ports).toContainEqual(expect.objectContaining({ name: 'debug', containerPort: 8081 }));
    // No Service sends to it: the metrics Service keeps to the metrics.
    const svc = one(objects, 'Service', 'etcd-operator-metrics') as unknown as {
      spec: { ports: { targetPort: string }[] };
    };
    expect(svc.spec.ports.map((p) => p.targetPort)).toEqual(['http']);

    const moved = manager(await renderChart({ 'debug.enabled': 'true', 'debug.host': '', 'debug.port': '9090' }, NS));
    expect(moved.args).toContain('--debug-listen=:9090');
  });
});

describe('chart with watchNamespace', () => {
  test('watches that namespace only, with a Role and RoleBinding there and the Lease Role at home', async () => {
    const objects = await renderChart({ watchNamespace: 'apps' }, NS);
    expect(manager(objects).args).toContain('--namespace=apps');
    // Cluster-wide, only the rights that release the operator's finalizers (see the next test),
    // and the people's roles aggregated into view, edit and admin (values.test.ts).
    expect(objects.filter((o) => o.kind.startsWith('Cluster')).map((o) => o.metadata.name)).toEqual([
      'etcd-operator-view',
      'etcd-operator-edit',
      'etcd-operator-apps-volume-nodes',
      'etcd-operator-apps-release',
      'etcd-operator-apps-volume-nodes',
      'etcd-operator-apps-release',
    ]);
    const role = one(objects, 'Role', 'etcd-operator');
    expect(role.metadata.namespace).toBe('apps');
    expect(grants(rulesOf(role))).toEqual(neededGrants);
    const binding = one(objects, 'RoleBinding', 'etcd-operator') as unknown as {
      metadata: { namespace: string };
      subjects: unknown[];
    };
    expect(binding.metadata.namespace).toBe('apps');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'etcd-operator', namespace: NS }]);
    expect(one(objects, 'Role', 'etcd-operator-leader-election').metadata.namespace).toBe(NS);
  });
});

describe('chart with watchNamespace: deleting that namespace', () => {
  test('the rights that release finalizers outlive its Role and RoleBinding: a ClusterRole on the operator kinds only', async () => {
    const objects = await renderChart({ watchNamespace: 'apps' }, NS);
    const role = one(objects, 'ClusterRole', 'etcd-operator-apps-release');
    const granted = grants(rulesOf(role));
    expect(granted).toEqual(
      expect.arrayContaining([
        'etcd-operator.dev/etcdmembers patch',
        'etcd-operator.dev/etcdmembers/status patch',
        'etcd-operator.dev/etcdmembers/finalizers update',
        'etcd-operator.dev/etcdsnapshots patch',
        'etcd-operator.dev/etcdsnapshots/finalizers update',
        'etcd-operator.dev/etcdclusters/status patch',
        // The resume annotation is written before a step's intents run, a deleting step's too.
        'etcd-operator.dev/etcdclusters patch',
      ]),
    );
    // Nothing beyond what the namespaced Role grants: no create or delete, no other kind.
    for (const g of granted) expect(neededGrants, g).toContain(g);
    for (const r of rulesOf(role)) expect(r.apiGroups).toEqual(['etcd-operator.dev']);
    const binding = one(objects, 'ClusterRoleBinding', 'etcd-operator-apps-release') as unknown as {
      roleRef: { kind: string; name: string };
      subjects: unknown[];
    };
    expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name: 'etcd-operator-apps-release' });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'etcd-operator', namespace: NS }]);
  });
});

describe('chart: the volume-node reads', () => {
  test.each([
    ['the default values', {}, 'etcd-operator-volume-nodes'],
    ['watchNamespace', { watchNamespace: 'apps' }, 'etcd-operator-apps-volume-nodes'],
  ])(
    'with %s, a ClusterRole of its own gets Nodes and PersistentVolumes by name, nothing more',
    async (_, values, name) => {
      const objects = await renderChart(values, NS);
      const role = one(objects, 'ClusterRole', name);
      expect(grants(rulesOf(role))).toEqual(
        grants(VOLUME_NODE_RIGHTS.map(([g, r, v]) => ({ apiGroups: [g], resources: [r], verbs: v.split(' ') }))),
      );
      const binding = one(objects, 'ClusterRoleBinding', name) as unknown as {
        roleRef: { kind: string; name: string };
        subjects: unknown[];
      };
      expect(binding.roleRef).toMatchObject({ kind: 'ClusterRole', name });
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'etcd-operator', namespace: NS }]);
    },
  );
});

describe('chart with persistence disabled', () => {
  test('the journal is on an emptyDir and no claim is made', async () => {
    const objects = await renderChart({ 'persistence.enabled': 'false' }, NS);
    expect(objects.filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(podSpec(objects).volumes.find((v) => v.name === 'journal')).toEqual({ name: 'journal', emptyDir: {} });
    expect(manager(objects).args).toContain('--journal=/var/lib/etcd-operator/journal.db');
  });
});

describe('chart with other values', () => {
  test('storageClassName "-" asks for no class; a named one is passed on', async () => {
    const none = one(await renderChart({ 'persistence.storageClassName': '-' }, NS), 'PersistentVolumeClaim');
    expect((none as unknown as { spec: { storageClassName: string } }).spec.storageClassName).toBe('');
    const fast = one(await renderChart({ 'persistence.storageClassName': 'fast' }, NS), 'PersistentVolumeClaim');
    expect((fast as unknown as { spec: { storageClassName: string } }).spec.storageClassName).toBe('fast');
  });

  test('agentImage, listen.host, leader election off and extraArgs reach the manager', async () => {
    const objects = await renderChart(
      {
        agentImage: 'example.com/agent:1',
        'listen.host': '$(POD_IP)',
        'leaderElection.enabled': 'false',
        'extraArgs[0]': '--foo=bar',
      },
      NS,
    );
    const args = manager(objects).args;
    expect(args).toEqual(
      expect.arrayContaining(['--agent-image=example.com/agent:1', '--listen=$(POD_IP):8080', '--leader-elect=false']),
    );
    expect(args.at(-1)).toBe('--foo=bar');
    expect(args.some((a) => a.startsWith('--lease-'))).toBe(false);
    expect(objects.filter((o) => o.metadata.name.endsWith('-leader-election'))).toEqual([]);
  });
});
