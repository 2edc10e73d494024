import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const fixtures = join(root, 'test/fixtures/invalid');
const namespace = `api-validation-${process.pid}`;

/** One invalid fixture: a create, or a base object and a merge patch that updates it. */
interface Fixture {
  readonly file: string;
  readonly description: string;
  /** What the refusal says; a list when its parts are apart (a CEL rule's field, then its message). */
  readonly expect: string | readonly string[];
  readonly create?: Manifest;
  readonly base?: Manifest;
  readonly update?: object;
}
interface Manifest {
  readonly kind: string;
  readonly metadata: { readonly name: string };
}

/** Runs kubectl against the local cluster; returns the combined output and whether it failed. */
async function kubectl(args: readonly string[], input?: string): Promise<{ ok: boolean; out: string }> {
  const env = { ...process.env, KUBECONFIG: inject('kubeconfig') };
  const child = run(inject('kubectlPath'), [...args], { env });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    const { stdout, stderr } = await child;
    return { ok: true, out: stdout + stderr };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    return { ok: false, out: `${err.stdout ?? ''}${err.stderr ?? err.message}` };
  }
}

const load = (file: string): Fixture => ({
  file,
  ...(parse(readFileSync(join(fixtures, file), 'utf8')) as Omit<Fixture, 'file'>),
});
const all = readdirSync(fixtures)
  .filter((f) => f.endsWith('.yaml'))
  .sort()
  .map(load);
const examples = readdirSync(join(root, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('api: the API server refuses bad EtcdClusters, EtcdMembers, EtcdSnapshots and schedules with a clear message', () => {
  beforeAll(async () => {
    const created = await kubectl(['create', 'namespace', namespace]);
    expect(created.out).toContain('created');
  });

  for (const f of all) {
    it(`${f.file}: ${f.description}`, async () => {
      let result;
      if (f.create) {
        result = await kubectl(['create', '-n', namespace, '--dry-run=server', '-f', '-'], stringify(f.create));
      } else {
        const base = f.base!;
        const created = await kubectl(['apply', '-n', namespace, '-f', '-'], stringify(base));
        expect(created.ok, created.out).toBe(true);
        const patch = JSON.stringify(f.update);
        result = await kubectl([
          'patch',
          '-n',
          namespace,
          base.kind.toLowerCase(),
          base.metadata.name,
          '--type=merge',
          '--dry-run=server',
          '-p',
          patch,
        ]);
      }
      expect(result.ok).toBe(false);
      for (const part of typeof f.expect === 'string' ? [f.expect] : f.expect) expect(result.out).toContain(part);
    });
  }

  it('kubectl explain shows the Kubernetes fields under resources, affinity, topologySpreadConstraints and the podTemplate', async () => {
    for (const [path, field] of [
      ['etcdcluster.spec.resources', 'limits'],
      ['etcdcluster.spec.podTemplate.spec.tolerations', 'tolerationSeconds'],
      ['etcdcluster.spec.podTemplate.spec.containers.readinessProbe', 'periodSeconds'],
      ['etcdcluster.spec.affinity.podAntiAffinity', 'preferredDuringSchedulingIgnoredDuringExecution'],
      ['etcdcluster.spec.topologySpreadConstraints', 'whenUnsatisfiable'],
    ]) {
      const explain = await kubectl(['explain', path!]);
      expect(explain.ok, explain.out).toBe(true);
      expect(explain.out).toContain(field);
    }
  });

  for (const file of examples) {
    it(`examples/${file} is accepted`, async () => {
      const result = await kubectl(['create', '-n', namespace, '--dry-run=server', '-f', join(root, 'examples', file)]);
      expect(result.out).toContain('created (server dry run)');
    });
  }

  it('accepts the changes a user may make: grow the volumes, scale, park at zero, tune options', async () => {
    const created = await kubectl(['apply', '-n', namespace, '-f', join(root, 'examples/etcdcluster.yaml')]);
    expect(created.ok, created.out).toBe(true);
    for (const patch of [
      { spec: { storage: { size: '2Gi' } } },
      { spec: { replicas: 5 } },
      { spec: { replicas: 0 } },
      { spec: { options: { quotaBackendBytes: '512Mi', snapshotCount: 5000 } } },
    ]) {
      const result = await kubectl([
        'patch',
        '-n',
        namespace,
        'etcdcluster',
        'demo',
        '--type=merge',
        '-p',
        JSON.stringify(patch),
      ]);
      expect(result.out).toContain('patched');
    }
    const scaled = await kubectl(['scale', '-n', namespace, 'etcdcluster/demo', '--replicas=3']);
    expect(scaled.out).toContain('scaled');
  });

  it('accepts etcd 3.7: a new 3.7.3 cluster, and an upgrade to it from 3.6.11, the oldest patch etcd upgrades from', async () => {
    const cluster = (name: string, version: string) => ({
      apiVersion: 'etcd-operator.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name },
      spec: { replicas: 1, version },
    });
    const created = await kubectl(
      ['create', '-n', namespace, '--dry-run=server', '-f', '-'],
      stringify(cluster('new-37', '3.7.3')),
    );
    expect(created.out).toContain('created (server dry run)');
    const base = await kubectl(['apply', '-n', namespace, '-f', '-'], stringify(cluster('from-3611', '3.6.11')));
    expect(base.ok, base.out).toBe(true);
    const upgraded = await kubectl([
      'patch',
      '-n',
      namespace,
      'etcdcluster',
      'from-3611',
      '--type=merge',
      '--dry-run=server',
      '-p',
      JSON.stringify({ spec: { version: '3.7.3' } }),
    ]);
    expect(upgraded.out).toContain('patched');
  });

  it('fills in the defaults a user leaves out', async () => {
    const minimal = {
      apiVersion: 'etcd-operator.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'minimal' },
      spec: {},
    };
    const result = await kubectl(
      ['create', '-n', namespace, '--dry-run=server', '-o', 'json', '-f', '-'],
      stringify(minimal),
    );
    const spec = (JSON.parse(result.out) as { spec: object }).spec;
    expect(spec).toEqual({ replicas: 3, version: '3.6.16', storage: { size: '1Gi' }, progressDeadlineSeconds: 600 });
  });

  it('fills in the defaults a schedule leaves out: not suspended, one run at a time, failures kept, snapshots deleted with it', async () => {
    const minimal = {
      apiVersion: 'etcd-operator.dev/v1alpha1',
      kind: 'EtcdSnapshotSchedule',
      metadata: { name: 'minimal' },
      spec: {
        clusterRef: { name: 'demo' },
        schedule: '@hourly',
        destination: { pvc: { claimName: 'backups' } },
        retention: { keepLast: 3 },
      },
    };
    const result = await kubectl(
      ['create', '-n', namespace, '--dry-run=server', '-o', 'json', '-f', '-'],
      stringify(minimal),
    );
    const spec = (JSON.parse(result.out) as { spec: object }).spec;
    expect(spec).toEqual({
      ...minimal.spec,
      suspend: false,
      concurrencyPolicy: 'Forbid',
      failedHistoryLimit: 1,
      deletionPolicy: 'Delete',
    });
  });
});
