/** A member's PersistentVolumeClaim, or none when it keeps its data in memory. */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember } from '../../api/v1alpha1/index.ts';
import { memberLabels, ownedMeta, pvcName } from './meta.ts';

/** Whether a member keeps its data in RAM (emptyDir medium Memory) rather than on a volume. */
export const inMemory = (member: EtcdMember): boolean => member.spec.storage.medium === 'Memory';

/**
 * `data-<member>`, owned by the EtcdMember so it goes with it, sized and classed by the member's
 * storage (empty class means the cluster default). Null for medium Memory.
 */
export function buildPVC(
  member: EtcdMember,
  cluster: Pick<EtcdCluster, 'spec'> | undefined,
): V1PersistentVolumeClaim | null {
  if (inMemory(member)) return null;
  const name = member.metadata.name ?? '';
  const { size, storageClassName } = member.spec.storage;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: ownedMeta(
      pvcName(name),
      member.metadata.namespace ?? '',
      memberLabels(member.spec.cluster, name),
      member,
      cluster?.spec.additionalMetadata,
    ),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: String(size) } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  };
}
