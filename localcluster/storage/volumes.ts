/**
 * What the provisioner should do, decided from the claims and volumes it sees: pure, so the
 * rules (one volume per claim, data goes when the claim goes, volumes grow) are unit-tested.
 */
import path from 'node:path';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { parseQuantity } from './quantity.ts';

/** The provisioner name the functions below take when none is given (the cluster runs SIZED_SCOPE's). */
export const PROVISIONER = 'etcd-operator.dev/local-process';
const PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
/** Where kube-scheduler writes the node it chose for the first Pod of a WaitForFirstConsumer claim. */
export const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

/**
 * One step the provisioner takes. `bytes` is set for a sized scope: the directory is then a tmpfs
 * of that size (made, or remounted larger, before the volume or claim says so).
 */
export type Action =
  | { readonly type: 'create'; readonly volume: V1PersistentVolume; readonly dir: string; readonly bytes?: number }
  | { readonly type: 'delete'; readonly name: string; readonly dir: string }
  | { readonly type: 'sweep'; readonly dir: string }
  | {
      readonly type: 'grow';
      readonly volume: string;
      readonly claim: V1PersistentVolumeClaim;
      readonly size: string;
      readonly dir?: string;
      readonly bytes?: number;
    }
  | { readonly type: 'mount'; readonly dir: string; readonly bytes: number };

/** Which claims a provisioner serves: those whose class names it. */
export interface Scope {
  readonly provisioner: string;
  readonly storageClass: string;
  /** Whether the class is the cluster's default (claims without a class get it). */
  readonly isDefault: boolean;
  /** Each volume is a tmpfs of the claim's size, so a Pod sees the size (statfs, df) and grows with it. */
  readonly sized?: boolean;
  /** The class is WaitForFirstConsumer: volumes belong to the node of the claim's first Pod. Default: Immediate. */
  readonly waitForConsumer?: boolean;
}

/** The class `local-sized`: volumes whose size the Pod sees, grown in place (needs root: mount). */
export const SIZED_SCOPE: Scope = {
  provisioner: 'etcd-operator.dev/local-sized',
  storageClass: 'local-sized',
  isDefault: false,
  sized: true,
  waitForConsumer: true,
};

/**
 * The StorageClass served by this provisioner. With waitForConsumer volumes belong to a node, as
 * kind's local-path ones do: a claim waits for its first Pod to be scheduled, and its volume is that node's.
 */
export function storageClass(scope: Scope): V1StorageClass {
  const annotations: Record<string, string> = scope.isDefault
    ? { 'storageclass.kubernetes.io/is-default-class': 'true' }
    : {};
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: scope.storageClass, annotations },
    provisioner: scope.provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: scope.waitForConsumer ? 'WaitForFirstConsumer' : 'Immediate',
    allowVolumeExpansion: true,
  };
}

/** The directory that holds the data of the claim with this uid. */
export function volumeDir(root: string, claimUid: string): string {
  return path.join(root, 'volumes', claimUid);
}

/**
 * The PersistentVolume provisioned for a claim: a host directory of the requested size, bound by
 * nodeAffinity to the node kube-scheduler selected, so a Pod using the claim goes back there.
 */
export function volumeFor(claim: V1PersistentVolumeClaim, root: string, provisioner = PROVISIONER): V1PersistentVolume {
  const uid = claim.metadata?.uid ?? '';
  const node = claim.metadata?.annotations?.[SELECTED_NODE];
  const hostname = { key: 'kubernetes.io/hostname', operator: 'In', values: [node ?? ''] };
  const nodeAffinity = node
    ? { nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [hostname] }] } } }
    : {};
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `pvc-${uid}`, annotations: { [PROVISIONED_BY]: provisioner } },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.['storage'] ?? '1Gi' },
      accessModes: claim.spec?.accessModes ?? ['ReadWriteOnce'],
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      storageClassName: claim.spec?.storageClassName ?? '',
      persistentVolumeReclaimPolicy: 'Delete',
      hostPath: { path: volumeDir(root, uid), type: 'DirectoryOrCreate' },
      ...nodeAffinity,
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
export function isOurs(volume: V1PersistentVolume, provisioner = PROVISIONER): boolean {
  return volume.metadata?.annotations?.[PROVISIONED_BY] === provisioner;
}

/**
 * The provisioner a claim waits for: what the PV controller wrote on it, else what its
 * StorageClass names (the controller may not have seen the claim yet).
 */
export function provisionerOf(claim: V1PersistentVolumeClaim, classes: readonly V1StorageClass[]): string | undefined {
  const a = claim.metadata?.annotations ?? {};
  const named = a['volume.kubernetes.io/storage-provisioner'] ?? a['volume.beta.kubernetes.io/storage-provisioner'];
  if (named) return named;
  const className = claim.spec?.storageClassName;
  return className ? classes.find((c) => c.metadata?.name === className)?.provisioner : undefined;
}

/** What plan() decides from. */
export interface PlanInput {
  readonly claims: readonly V1PersistentVolumeClaim[];
  readonly volumes: readonly V1PersistentVolume[];
  readonly classes: readonly V1StorageClass[];
  readonly root: string;
  readonly provisioner?: string;
  /** Names of the directories under `root/volumes` (claim uids). */
  readonly dirs?: readonly string[];
  /** Sized scope: the claim uids whose directory is mounted now (a tmpfs of ours). */
  readonly mounted?: readonly string[];
  readonly sized?: boolean;
}

/** The steps that bring volumes in line with claims: provision, reclaim, grow. */
export function plan(input: PlanInput): Action[] {
  const { claims, volumes, classes, root, provisioner = PROVISIONER, dirs = [], mounted = [], sized = false } = input;
  const actions: Action[] = [];
  const ours = (v: V1PersistentVolume): boolean => isOurs(v, provisioner);
  const byClaim = new Map(volumes.filter(ours).map((v) => [v.spec?.claimRef?.uid ?? '', v]));
  for (const claim of claims) {
    const uid = claim.metadata?.uid;
    if (!uid || claim.metadata?.deletionTimestamp || provisionerOf(claim, classes) !== provisioner) continue;
    const volume = byClaim.get(uid);
    if (!volume) {
      // A claim naming a volume or selecting by label asks for an existing one, not a new one.
      if (claim.spec?.volumeName || claim.spec?.selector) continue;
      if (waitsForConsumer(claim, classes)) continue;
      const volume = volumeFor(claim, root, provisioner);
      const bytes = sized ? parseQuantity(volume.spec?.capacity?.['storage'] ?? '0') : undefined;
      actions.push({ type: 'create', volume, dir: volumeDir(root, uid), ...(bytes ? { bytes } : {}) });
      continue;
    }
    // After a restart the tmpfs is gone: it is made again (with what was saved at the stop) first.
    const have = volume.spec?.capacity?.['storage'];
    if (sized && have && !mounted.includes(uid) && !volume.metadata?.deletionTimestamp)
      actions.push({ type: 'mount', dir: volumeDir(root, uid), bytes: parseQuantity(have) });
    const want = claim.spec?.resources?.requests?.['storage'];
    const shown = claim.status?.phase === 'Bound' ? claim.status.capacity?.['storage'] : undefined;
    if (want && have && (smaller(have, want) || (shown !== undefined && smaller(shown, want)))) {
      const resize = sized ? { dir: volumeDir(root, uid), bytes: parseQuantity(want) } : {};
      actions.push({ type: 'grow', volume: volume.metadata?.name ?? '', claim, size: want, ...resize });
    }
  }
  for (const volume of volumes) {
    const phase = volume.status?.phase;
    if (!ours(volume) || volume.metadata?.deletionTimestamp) continue;
    if ((phase === 'Released' || phase === 'Failed') && volume.spec?.persistentVolumeReclaimPolicy === 'Delete') {
      // The directory is derived, never read from the volume, so nothing outside root is removed.
      const uid = volume.spec.claimRef?.uid;
      const dir = uid ? volumeDir(root, uid) : '';
      actions.push({ type: 'delete', name: volume.metadata?.name ?? '', dir });
    }
  }
  // A directory made just before a crash, whose volume was never created and whose claim is
  // gone, would stay forever: nothing else refers to it.
  const claimed = new Set([...claims.map((c) => c.metadata?.uid), ...volumes.map((v) => v.spec?.claimRef?.uid)]);
  for (const uid of dirs) if (!claimed.has(uid)) actions.push({ type: 'sweep', dir: volumeDir(root, uid) });
  return actions;
}

/** A claim of a WaitForFirstConsumer class whose first Pod has no node yet: provisioned once it has. */
function waitsForConsumer(claim: V1PersistentVolumeClaim, classes: readonly V1StorageClass[]): boolean {
  const cls = classes.find((c) => c.metadata?.name === claim.spec?.storageClassName);
  return cls?.volumeBindingMode === 'WaitForFirstConsumer' && !claim.metadata?.annotations?.[SELECTED_NODE];
}

function smaller(a: string, b: string): boolean {
  return parseQuantity(a) < parseQuantity(b);
}
