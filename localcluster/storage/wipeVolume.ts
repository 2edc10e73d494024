/**
 * Empties the volume bound to a claim from any process that has the kubeconfig, not only the
 * one running the provisioner: tests in other workers wipe members' data this way.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { errorText } from '../network/informer.ts';
import { StorageError } from './errors.ts';
import { isOurs, PROVISIONER } from './volumes.ts';

/**
 * Deletes everything inside the directory of the volume bound to namespace/claim; the claim,
 * the volume and the directory itself stay (Pods hold the directory as a bind mount).
 */
export async function wipeVolume(
  kubeconfigPath: string,
  namespace: string,
  claim: string,
  provisioner = PROVISIONER,
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
  const dir = pv?.spec?.hostPath?.path ?? '';
  // Only a directory this provisioner made for this very claim is ever emptied.
  if (!pv || !isOurs(pv, provisioner) || pv.spec?.claimRef?.uid !== uid || path.basename(dir) !== uid) {
    throw new StorageError(
      'ERR_WIPE_NOT_BOUND',
      `wipe: claim ${namespace}/${claim} is not bound to a volume of ${provisioner}`,
    );
  }
  for (const entry of await readdir(dir)) await rm(path.join(dir, entry), { recursive: true, force: true });
  return dir;
}
