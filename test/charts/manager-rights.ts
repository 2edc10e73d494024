/**
 * The rights the chart gives the manager, as the tests check them: what its handlers and
 * informers call, by (API group, resource), and no more; and rights it must never hold.
 * docs/security.md names the caller of each.
 */

/** (API group, resource or resource/subresource, verbs) the manager needs. */
export const MANAGER_RIGHTS: readonly (readonly [string, string, string])[] = [
  // patch: the resume annotation (etcd-operator.dev/resume), the manager's only write to the object.
  ['etcd-operator.dev', 'etcdclusters', 'get list watch patch'],
  ['etcd-operator.dev', 'etcdclusters/status', 'patch'],
  ['etcd-operator.dev', 'etcdclusters/finalizers', 'update'],
  ['etcd-operator.dev', 'etcdmembers', 'get list watch create patch delete'],
  ['etcd-operator.dev', 'etcdmembers/status', 'patch'],
  ['etcd-operator.dev', 'etcdmembers/finalizers', 'update'],
  ['etcd-operator.dev', 'etcdsnapshots', 'get list watch create patch delete'],
  ['etcd-operator.dev', 'etcdsnapshots/status', 'patch'],
  ['etcd-operator.dev', 'etcdsnapshots/finalizers', 'update'],
  ['etcd-operator.dev', 'etcdsnapshotschedules', 'get list watch patch'],
  ['etcd-operator.dev', 'etcdsnapshotschedules/status', 'patch'],
  ['batch', 'jobs', 'get list watch create delete'],
  ['', 'pods', 'get list watch create delete'],
  ['', 'persistentvolumeclaims', 'get list watch create patch'],
  ['', 'services', 'get create patch'],
  ['', 'events', 'list create patch'],
  ['policy', 'poddisruptionbudgets', 'get create update delete'],
  // cert-manager Certificates of a cluster whose spec.tls names an issuer.
  ['cert-manager.io', 'certificates', 'get create patch'],
  // The TLS Secrets an EtcdCluster's spec.tls names, read by name: never listed or watched.
  ['', 'secrets', 'get'],
];

/** Cluster-wide reads, in a ClusterRole of their own whatever the scope: a member's volume and the node it is pinned to. */
export const VOLUME_NODE_RIGHTS: readonly (readonly [string, string, string])[] = [
  ['', 'nodes', 'get'],
  ['', 'persistentvolumes', 'get'],
];

/**
 * (verb, resource, subresource) the manager must not hold anywhere: Secrets beyond get by name, a way into
 * Pods or onto another identity, RBAC and cluster-wide objects, the user's own objects beyond
 * status, and anything at all on every resource.
 */
export const FORBIDDEN_RIGHTS: readonly (readonly [string, string, string?])[] = [
  ['list', 'secrets'],
  ['watch', 'secrets'],
  ['create', 'pods', 'exec'],
  ['create', 'pods', 'attach'],
  ['create', 'pods', 'portforward'],
  ['patch', 'pods'],
  ['create', 'serviceaccounts', 'token'],
  ['impersonate', 'serviceaccounts'],
  ['create', 'clusterroles.rbac.authorization.k8s.io'],
  ['create', 'clusterrolebindings.rbac.authorization.k8s.io'],
  ['create', 'rolebindings.rbac.authorization.k8s.io'],
  ['escalate', 'roles.rbac.authorization.k8s.io'],
  ['bind', 'clusterroles.rbac.authorization.k8s.io'],
  ['delete', 'namespaces'],
  ['create', 'customresourcedefinitions.apiextensions.k8s.io'],
  ['update', 'nodes'],
  ['delete', 'persistentvolumes'],
  ['delete', 'persistentvolumeclaims'],
  ['update', 'etcdclusters.etcd-operator.dev'],
  ['delete', 'etcdclusters.etcd-operator.dev'],
  ['update', 'deployments.apps'],
  ['list', 'configmaps'],
  ['*', '*'],
  ['*', 'pods'],
  ['get', '*'],
];

/** Each right as `kubectl auth can-i` takes it: verb, resource.group, and --subresource when there is one. */
export function canIArgs(verb: string, group: string, resource: string): string[] {
  const [plural, sub] = resource.split('/');
  return [verb, group ? `${plural}.${group}` : plural!, ...(sub ? [`--subresource=${sub}`] : [])];
}
