/** What the manager's flags add to every Pod it makes: the etcd image's repository, pull Secrets, default resources. */
import type { V1LocalObjectReference, V1ResourceRequirements } from '@kubernetes/client-node';

/** Where etcd's images come from unless the manager is told otherwise; the tag is always v<version>. */
export const DEFAULT_ETCD_IMAGE_REPOSITORY = 'quay.io/coreos/etcd';

/** The manager-wide settings of the Pods it builds (manager/config.ts parses them from flags). */
export interface PodSettings {
  /** Repository of the etcd images (an air-gapped mirror, say); default DEFAULT_ETCD_IMAGE_REPOSITORY. */
  readonly etcdImageRepository?: string;
  /** Secrets, in each EtcdCluster's namespace, the kubelet pulls the etcd and agent images with. */
  readonly imagePullSecrets?: readonly string[];
  /** The etcd container's resources when the cluster's spec.resources is unset. */
  readonly memberResources?: V1ResourceRequirements;
  /** The agent container's resources in snapshot and restore Jobs. */
  readonly jobResources?: V1ResourceRequirements;
}

/** The image of an etcd version, from the repository given or quay.io's. */
export const etcdImage = (version: string, repository = DEFAULT_ETCD_IMAGE_REPOSITORY): string =>
  `${repository}:v${version}`;

/** The pull Secrets of a Pod: the template's (members only) first, then the manager's, each name once. */
export function pullSecrets(
  settings: PodSettings,
  template: readonly V1LocalObjectReference[] = [],
): { imagePullSecrets?: V1LocalObjectReference[] } {
  const names = [...template.map((r) => r.name), ...(settings.imagePullSecrets ?? [])];
  const unique = [...new Set(names)];
  return unique.length ? { imagePullSecrets: unique.map((name) => ({ name })) } : {};
}

/** A container's resources: the given ones, else the default, else none. */
export function resourcesOr(
  given: V1ResourceRequirements | undefined,
  fallback: V1ResourceRequirements | undefined,
): { resources?: V1ResourceRequirements } {
  const r = given ?? fallback;
  return r ? { resources: r } : {};
}
