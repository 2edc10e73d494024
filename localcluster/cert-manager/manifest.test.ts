import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { certManagerControllerImage, DISTROLESS_NONROOT } from '../realnode/images.ts';
import { clusterResourceNamespace, CONTROLLER_ROLES, controllerObjects } from './manifest.ts';

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}
interface Container {
  image: string;
  command?: string[];
  args: string[];
  env: { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports: { name: string; containerPort: number }[];
  volumeMounts: { name: string; mountPath: string }[];
  livenessProbe: { httpGet: { port: string; path: string }; initialDelaySeconds: number; failureThreshold: number };
  readinessProbe: { httpGet: { port: string; path: string } };
  securityContext: Record<string, unknown>;
}
interface PodSpec {
  serviceAccountName: string;
  securityContext: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes: { name: string; configMap?: { name: string } }[];
  containers: Container[];
}
type Deployment = Obj & {
  spec: {
    replicas: number;
    strategy: { type: string };
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
};

const objects = controllerObjects() as unknown as Obj[];
const deployment = objects.find((o) => o.kind === 'Deployment') as Deployment;
const pod = deployment.spec.template.spec;
const container = pod.containers[0]!;
const arg = (flag: string): string | undefined =>
  container.args.find((a) => a.startsWith(`--${flag}=`))?.slice(flag.length + 3);

describe("cert-manager's controller on the nodes", () => {
  it('runs the image the registry serves under its real name, from its entrypoint (no command)', () => {
    expect(container.image).toBe(certManagerControllerImage('/x').name);
    expect(container.command).toBeUndefined();
  });

  it('runs non-root as the chart asks, which the image allows: its user is a numeric uid other than 0', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeUndefined();
    expect(DISTROLESS_NONROOT).toMatch(/^[1-9]\d*$/);
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true });
  });

  it("keeps the process's arguments: its namespace as the cluster resource namespace, the chart's verbosity", () => {
    expect(deployment.metadata.namespace).toBe(clusterResourceNamespace);
    expect(arg('cluster-resource-namespace')).toBe('$(POD_NAMESPACE)');
    expect(container.env).toContainEqual({
      name: 'POD_NAMESPACE',
      valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
    });
    expect(arg('v')).toBe('2');
  });

  it('is probed where it serves /healthz: every interface, on the port the probes name', () => {
    const port = container.ports.find((p) => p.name === container.readinessProbe.httpGet.port)!;
    expect(arg('health-address')).toBe(`0.0.0.0:${port.containerPort}`);
    expect(port.containerPort).toBe(9403);
    expect(container.readinessProbe.httpGet.path).toBe('/healthz');
    expect(container.livenessProbe.httpGet).toMatchObject({ port: port.name, path: '/healthz' });
    // The chart's liveness timings: a slow informer sync is not a restart.
    expect(container.livenessProbe).toMatchObject({ initialDelaySeconds: 10, failureThreshold: 8 });
  });

  it("reaches the API server as its ServiceAccount: the kubeconfig it is given names the Pod's token and CA", () => {
    const volume = pod.volumes.find((v) => v.configMap)!;
    const mount = container.volumeMounts.find((m) => m.name === volume.name)!;
    expect(arg('kubeconfig')).toBe(`${mount.mountPath}/kubeconfig`);
    const configMap = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === volume.configMap!.name,
    ) as Obj & {
      data: { kubeconfig: string };
    };
    const kubeconfig = parse(configMap.data.kubeconfig) as {
      clusters: { cluster: { server: string; 'certificate-authority': string } }[];
      users: { user: Record<string, string> }[];
    };
    expect(kubeconfig.clusters[0]!.cluster).toEqual({
      server: 'https://kubernetes.default.svc:443',
      'certificate-authority': '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
    });
    expect(kubeconfig.users[0]!.user).toEqual({ tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' });
  });

  it('binds its ServiceAccount to each ClusterRole, which lets it issue and approve', () => {
    const sa = objects.find((o) => o.kind === 'ServiceAccount')!;
    expect(sa.metadata).toMatchObject({ name: pod.serviceAccountName, namespace: clusterResourceNamespace });
    const bindings = objects.filter((o) => o.kind === 'ClusterRoleBinding') as (Obj & {
      roleRef: { name: string };
      subjects: unknown[];
    })[];
    const roles = objects.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name);
    expect(roles).toHaveLength(Object.keys(CONTROLLER_ROLES).length);
    expect(bindings.map((b) => b.roleRef.name).sort()).toEqual([...roles].sort());
    for (const b of bindings)
      expect(b.subjects).toEqual([
        { kind: 'ServiceAccount', name: sa.metadata.name, namespace: clusterResourceNamespace },
      ]);
    const rules = Object.values(CONTROLLER_ROLES).flat();
    const allows = (group: string, resource: string, verb: string): boolean =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    // What the certificates controllers do: make a CertificateRequest, prune old ones, set status.
    expect(allows('cert-manager.io', 'certificaterequests', 'create')).toBe(true);
    expect(allows('cert-manager.io', 'certificaterequests', 'delete')).toBe(true);
    expect(allows('cert-manager.io', 'certificaterequests/status', 'patch')).toBe(true);
    expect(allows('cert-manager.io', 'certificates/status', 'update')).toBe(true);
    expect(allows('', 'secrets', 'create')).toBe(true);
    expect(allows('cert-manager.io', 'signers', 'approve')).toBe(true);
    expect(allows('', 'events', 'create')).toBe(true);
  });

  it('never runs two controllers at once (no leader election): one replica, replaced by Recreate', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy.type).toBe('Recreate');
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
  });
});
