/**
 * What the provisioner should do, decided from the claims and volumes it sees: pure, so the
 * rules (one volume per claim, data goes when the claim goes, volumes grow) are unit-tested.
 */
import path from 'node:path';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { parseQuantity } from './quantity.ts';

/** The provisioner name written on the StorageClass and on every volume it creates. */
export const PROVISIONER = 'etcd-operator.dev/local-process';
/** The default StorageClass created at start. */
export const STORAGE_CLASS = 'local';
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';

/** One step the provisioner takes. */
export type Action =
  | { readonly type: 'create'; readonly volume: V1PersistentVolume; readonly dir: string }
  | { readonly type: 'delete'; readonly name: string; readonly dir: string }
  | { readonly type: 'grow'; readonly volume: string; readonly claim: V1PersistentVolumeClaim; readonly size: string };

/** The default StorageClass `local`, served by this provisioner. */
export function storageClass(): V1StorageClass {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  };
}

/** The directory that holds the data of the claim with this uid. */
export function volumeDir(root: string, claimUid: string): string {
  return path.join(root, 'volumes', claimUid);
}

/** The PersistentVolume provisioned for a claim: a host directory of the requested size. */
export function volumeFor(claim: V1PersistentVolumeClaim, root: string): V1PersistentVolume {
  const uid = claim.metadata?.uid ?? '';
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `pvc-${uid}`, annotations: { [PROVISIONED_BY]: PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.['storage'] ?? '1Gi' },
      accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      storageClassName: claim.spec?.storageClassName ?? '',
      persistentVolumeReclaimPolicy: 'Delete',
      hostPath: { path: volumeDir(root, uid), type: 'DirectoryOrCreate' },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        name: claim.metadata?.name ?? '',
        namespace: claim.metadata?.namespace ?? '',
        uid,
      },
    },
  };
}

/** Whether this provisioner made the volume (it never touches anyone else's). */
export function isOurs(volume: V1PersistentVolume): boolean {
  return volume.metadata?.annotations?.[PROVISIONED_BY] === PROVISIONER;
}

/** The steps that bring volumes in line with claims: provision, reclaim, grow. */
export function plan(
  claims: readonly V1PersistentVolumeClaim[],
  volumes: readonly V1PersistentVolume[],
  root: string,
): Action[] {
  const actions: Action[] = [];
  const byClaim = new Map(volumes.filter(isOurs).map((v) => [v.spec?.claimRef?.uid ?? '', v]));
  for (const claim of claims) {
    const uid = claim.metadata?.uid;
    if (!uid || claim.metadata?.deletionTimestamp) continue;
    const volume = byClaim.get(uid);
    if (!volume) {
      // A claim naming a volume or selecting by label asks for an existing one, not a new one.
      if (claim.spec?.volumeName || claim.spec?.selector) continue;
      actions.push({ type: 'create', volume: volumeFor(claim, root), dir: volumeDir(root, uid) });
      continue;
    }
    const want = claim.spec?.resources?.requests?.['storage'];
    const have = volume.spec?.capacity?.['storage'];
    const shown = claim.status?.phase === 'Bound' ? claim.status.capacity?.['storage'] : undefined;
    if (want && have && (smaller(have, want) || (shown !== undefined && smaller(shown, want)))) {
      actions.push({ type: 'grow', volume: volume.metadata?.name ?? '', claim, size: want });
    }
  }
  for (const volume of volumes) {
    const phase = volume.status?.phase;
    if (!isOurs(volume) || volume.metadata?.deletionTimestamp) continue;
    if ((phase === 'Released' || phase === 'Failed') && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      // The directory is derived, never read from the volume, so nothing outside root is removed.
      const uid = volume.spec.claimRef?.uid;
      const dir = uid ? volumeDir(root, uid) : '';
      actions.push({ type: 'delete', name: volume.metadata?.name ?? '', dir });
    }
  }
  return actions;
}

function smaller(a: string, b: string): boolean {
  return parseQuantity(a) < parseQuantity(b);
}
