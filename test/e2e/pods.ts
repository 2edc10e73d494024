/** Helpers for tests that run Pods of their own on the local cluster: polling, namespaces and etcd Pod manifests. */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { until } from '../../localcluster/until.ts';

/** The Pod once it satisfies check. */
export function podWhen(
  core: CoreV1Api,
  namespace: string,
  name: string,
  check: (pod: V1Pod) => boolean,
): Promise<V1Pod> {
  const matches = async () => {
    const pod = await core.readNamespacedPod({ name, namespace });
    return check(pod) ? pod : undefined;
  };
  return until(`Pod ${namespace}/${name}`, matches, Infinity, 100);
}

/** Whether the Pod's Ready condition is True (a V1Pod, or a Pod as `kubectl get -o json` gives it). */
export function isReady(pod: { status?: { conditions?: readonly { type: string; status: string }[] } }): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** Resolves once the Pod object is gone. */
export function podGone(core: CoreV1Api, namespace: string, name: string): Promise<true> {
  const gone = () =>
    core.readNamespacedPod({ name, namespace }).then(
      () => undefined,
      (err: { code?: number }) => (err.code === 404 ? (true as const) : undefined),
    );
  return until(`Pod ${namespace}/${name} gone`, gone, Infinity, 100);
}

/** Options of an etcd member Pod. */
export interface EtcdPodOptions {
  readonly name: string;
  readonly nodeName?: string;
  readonly claim?: string;
  readonly version?: string;
  /** `--initial-cluster` value; default: this member alone at its Pod IP. */
  readonly initialCluster?: string;
  /** Advertise `<name>.<subdomain>.<ns>.svc` instead of the Pod IP. */
  readonly subdomain?: string;
  readonly clusterToken?: string;
}

/** An etcd member Pod listening on its Pod IP, Ready when /readyz answers. */
export function etcdPod(o: EtcdPodOptions): V1Pod {
  const host = o.subdomain ? `$(POD_NAME).${o.subdomain}.$(POD_NAMESPACE).svc` : '$(POD_IP)';
  const args = [
    '--name=$(POD_NAME)',
    '--data-dir=/var/lib/etcd/data',
    '--listen-client-urls=http://$(POD_IP):2379',
    `--advertise-client-urls=http://${host}:2379`,
    '--listen-peer-urls=http://$(POD_IP):2380',
    `--initial-advertise-peer-urls=http://${host}:2380`,
    `--initial-cluster=${o.initialCluster ?? `$(POD_NAME)=http://${host}:2380`}`,
    `--initial-cluster-token=${o.clusterToken ?? o.name}`,
  ];
  const field = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
  return {
    metadata: { name: o.name, labels: { app: o.subdomain ?? o.name } },
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.subdomain ? { hostname: o.name, subdomain: o.subdomain } : {}),
      terminationGracePeriodSeconds: 10,
      containers: [
        {
          name: 'etcd',
          image: `quay.io/coreos/etcd:v${o.version ?? '3.6.16'}`,
          // The image has no entrypoint (its CMD is etcd), so args alone would replace the command.
          command: ['/usr/local/bin/etcd'],
          args,
          env: [
            field('POD_NAME', 'metadata.name'),
            field('POD_NAMESPACE', 'metadata.namespace'),
            field('POD_IP', 'status.podIP'),
          ],
          ports: [
            { name: 'client', containerPort: 2379 },
            { name: 'peer', containerPort: 2380 },
          ],
          readinessProbe: { httpGet: { path: '/readyz', port: 'client' }, periodSeconds: 1, failureThreshold: 3 },
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
        },
      ],
      volumes: [
        o.claim ? { name: 'data', persistentVolumeClaim: { claimName: o.claim } } : { name: 'data', emptyDir: {} },
      ],
    },
  };
}

/**
 * Deletes the namespace and waits until its Pods are gone, so no Pod is left on a node about to
 * stop. Cleanup after a failed test may find the node stopped: after 30 s Pods are force-deleted.
 */
export async function deleteNamespace(core: CoreV1Api, namespace: string): Promise<void> {
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  const deadline = Date.now() + 30_000;
  await until(`the Pods of ${namespace} gone`, async () => {
    const pods = (await core.listNamespacedPod({ namespace })).items;
    if (pods.length && Date.now() > deadline) {
      for (const p of pods)
        await core
          .deleteNamespacedPod({ name: p.metadata!.name!, namespace, body: { gracePeriodSeconds: 0 } })
          .catch(() => undefined);
    }
    return pods.length === 0 ? true : undefined;
  });
}

/** Creates a namespace and waits for its default ServiceAccount (made by a controller, as in any cluster). */
export async function createNamespace(core: CoreV1Api, namespace: string): Promise<void> {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await until(
    `ServiceAccount default in ${namespace}`,
    () => core.readNamespacedServiceAccount({ name: 'default', namespace }).then(() => true),
    Infinity,
    100,
  );
}
