/**
 * Empties the volume bound to a claim from any process that has the kubeconfig, not only the
 * one running the provisioner: tests in other workers wipe members' data this way. The nodes
 * share the machine's file system, so a node's volume directory is a directory here too.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { errorText } from '../network/informer.ts';
import { StorageError } from './errors.ts';
import { LOCAL_PATH_PROVISIONER } from './localPath.ts';
import { isOurs, SIZED_SCOPE } from './volumes.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

/** The local cluster's provisioners: local-path (class standard) and the sized one (local-sized). */
const CLUSTER_PROVISIONERS = [LOCAL_PATH_PROVISIONER, SIZED_SCOPE.provisioner];

/**
 * Whether `dir` is the directory made for the claim with this uid: ours name it after the uid,
 * local-path after the volume (`pvc-<uid>`), the claim's namespace and name.
 */
export function isClaimDir(dir: string, uid: string): boolean {
  const base = path.basename(dir);
  return uid !== '' && (base === uid || base.startsWith(`pvc-${uid}_`));
}

/** The host directory of a volume: hostPath, or the path of a `local` volume. */
const volumePath = (pv: V1PersistentVolume | undefined): string =>
  pv?.spec?.hostPath?.path ?? pv?.spec?.local?.path ?? '';

/**
 * Deletes everything inside the directory of the volume bound to namespace/claim; the claim,
 * the volume and the directory itself stay (Pods hold the directory as a bind mount). Only a
 * volume of `provisioners` (default: the cluster's) is wiped.
 */
export async function wipeVolume(
  kubeconfigPath: string,
  namespace: string,
  claim: string,
  provisioners: readonly string[] = CLUSTER_PROVISIONERS,
): Promise<string> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const pvc = await core.readNamespacedPersistentVolumeClaim({ name: claim, namespace }).catch((err: unknown) => {
    throw new StorageError('ERR_WIPE_NO_CLAIM', `wipe: claim ${namespace}/${claim}: ${errorText(err)}`, { cause: err });
  });
  const uid = pvc.metadata?.uid ?? '';
  const name = pvc.spec?.volumeName;
  const pv = name ? await core.readPersistentVolume({ name }).catch(() => undefined) : undefined;
  const dir = volumePath(pv);
  // Only a directory a provisioner made for this very claim is ever emptied.
  const ours = pv !== undefined && provisioners.some((p) => isOurs(pv, p));
  if (!ours || pv.spec?.claimRef?.uid !== uid || !isClaimDir(dir, uid)) {
    throw new StorageError(
      'ERR_WIPE_NOT_BOUND',
      `wipe: claim ${namespace}/${claim} is not bound to a volume of ${provisioners.join(' or ')}`,
    );
  }
  for (const entry of await readdir(dir)) await rm(path.join(dir, entry), { recursive: true, force: true });
  return dir;
}
