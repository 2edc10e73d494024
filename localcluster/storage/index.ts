/**
 * The local cluster's storage: local-path-provisioner for the default class `standard`
 * (localPath.ts), and our own provisioner for the growable class `local-sized`: it gives every
 * claim of its class a directory under `dir/volumes/<claim uid>` (a tmpfs of the claim's size),
 * lets the controller manager bind it, deletes the data when the claim goes, grows volumes, and
 * wipes a volume for fault tests.
 */
import { chmod, mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import type { ControllerOptions, Storage } from '../types.ts';
import { Serial, startInformer } from '../network/informer.ts';
import { ignore, StorageError } from './errors.ts';
import { mountedUnder, mountSized, resizeSized, restoreSaved, saveAndUnmount, unmountSized } from './tmpfs.ts';
import { wipeVolume } from './wipeVolume.ts';
import { plan, storageClass } from './volumes.ts';
import type { Action, Scope } from './volumes.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

export { StorageError } from './errors.ts';
export { wipeVolume } from './wipeVolume.ts';
export { SIZED_SCOPE } from './volumes.ts';
export { LOCAL_PATH_PROVISIONER, startLocalPath, STANDARD_CLASS } from './localPath.ts';

/**
 * Starts the provisioner; resolves once its StorageClass exists and claims and volumes are
 * listed. `scope` names another provisioner and class, so a test can run its own beside the cluster's.
 */
export async function startStorage(opts: ControllerOptions, scope: Scope): Promise<Storage> {
  const log = opts.log ?? (() => {});
  const root = path.resolve(opts.dir);
  await mkdir(path.join(root, 'volumes'), { recursive: true });
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const storageApi = kc.makeApiClient(StorageV1Api);
  await ensureStorageClass(storageApi, scope);

  const serial = new Serial(
    () => reconcile(),
    (line) => log(`storage: ${line}`),
  );
  // Informers report as soon as they connect; reconcile waits until every cache is listed.
  let listed = false;
  const kick = (): void => void (listed && serial.kick());
  const claims = await startInformer<V1PersistentVolumeClaim>(
    kc,
    '/api/v1/persistentvolumeclaims',
    () => core.listPersistentVolumeClaimForAllNamespaces(),
    kick,
    log,
  );
  const volumes = await startInformer<V1PersistentVolume>(
    kc,
    '/api/v1/persistentvolumes',
    () => core.listPersistentVolume(),
    kick,
    log,
  );
  const classes = await startInformer<V1StorageClass>(
    kc,
    '/apis/storage.k8s.io/v1/storageclasses',
    () => storageApi.listStorageClass(),
    kick,
    log,
  );

  const sized = scope.sized === true;
  const volumesDir = path.join(root, 'volumes');
  /** Where a sized volume's data waits while the provisioner is stopped. */
  const savedDir = (dir: string): string => path.join(root, 'saved', path.basename(dir));

  async function reconcile(): Promise<void> {
    const dirs = await readdir(volumesDir);
    const mounted = sized ? await mountedUnder(volumesDir) : [];
    const input = {
      claims: claims.list(),
      volumes: volumes.list(),
      classes: classes.list(),
      root,
      dirs,
      mounted,
      sized,
    };
    for (const action of plan({ ...input, provisioner: scope.provisioner })) await apply(action);
  }

  async function apply(action: Action): Promise<void> {
    switch (action.type) {
      case 'create':
        await mkdir(action.dir, { recursive: true });
        // Writable by any user, as local-path-provisioner makes its dirs: a real kubelet applies no
        // fsGroup to a hostPath volume, and the members run as a non-root user (a tmpfs is 1777).
        await chmod(action.dir, 0o777);
        if (action.bytes) await mountSized(action.dir, action.bytes);
        // A second pass may run before the volume informer has seen the first create: 409 is done.
        if (await ignore(409, core.createPersistentVolume({ body: action.volume }))) {
          log(`storage: provisioned ${action.volume.metadata?.name} for ${claimName(action.volume)}`);
        }
        return;
      case 'delete':
        if (action.dir && sized) await unmountSized(action.dir);
        if (action.dir) await rm(action.dir, { recursive: true, force: true });
        await ignore(404, core.deletePersistentVolume({ name: action.name }));
        log(`storage: deleted ${action.name} and its data`);
        return;
      case 'sweep':
        if (sized) await unmountSized(action.dir);
        await rm(action.dir, { recursive: true, force: true });
        log(`storage: removed ${action.dir}, which no claim or volume refers to`);
        return;
      case 'grow':
        // The file system first: the claim says the new size only once the Pod can see it.
        if (action.dir && action.bytes) await resizeSized(action.dir, action.bytes);
        await grow(action.volume, action.claim, action.size);
        return;
      case 'mount':
        await mountSized(action.dir, action.bytes);
        if (await restoreSaved(savedDir(action.dir), action.dir)) log(`storage: restored ${action.dir} from its copy`);
        return;
    }
  }

  async function grow(name: string, claim: V1PersistentVolumeClaim, size: string): Promise<void> {
    const volume = await core.readPersistentVolume({ name });
    if (volume.spec) volume.spec.capacity = { ...volume.spec.capacity, storage: size };
    await core.replacePersistentVolume({ name, body: volume });
    const fresh = await core.readNamespacedPersistentVolumeClaim({
      name: claim.metadata?.name ?? '',
      namespace: claim.metadata?.namespace ?? '',
    });
    if (fresh.status?.phase === 'Bound') {
      fresh.status.capacity = { ...fresh.status.capacity, storage: size };
      fresh.status.conditions = fresh.status.conditions?.filter((c) => !c.type.includes('Resiz'));
      await core.replaceNamespacedPersistentVolumeClaimStatus({
        name: fresh.metadata?.name ?? '',
        namespace: fresh.metadata?.namespace ?? '',
        body: fresh,
      });
    }
    log(`storage: grew ${name} to ${size}`);
  }

  listed = true;
  await serial.kick();
  return {
    async wipe(namespace: string, claim: string): Promise<void> {
      const dir = await wipeVolume(opts.kubeconfigPath, namespace, claim, [scope.provisioner]);
      log(`storage: wiped ${namespace}/${claim} (${dir})`);
    },
    async stop(): Promise<void> {
      await Promise.all([claims.stop(), volumes.stop(), classes.stop()]);
      await serial.close();
      // A tmpfs would hold its data only as long as it is mounted: the data is copied out, and
      // put back when the next start (same dir) mounts the volume again. Nothing stays mounted.
      if (sized)
        for (const uid of await mountedUnder(volumesDir)) {
          const dir = path.join(volumesDir, uid);
          await saveAndUnmount(dir, savedDir(dir));
          log(`storage: unmounted ${dir}, its data kept in ${savedDir(dir)}`);
        }
    },
  };
}

async function ensureStorageClass(api: StorageV1Api, scope: Scope): Promise<void> {
  const wanted = storageClass(scope);
  await ignore(409, api.createStorageClass({ body: wanted }));
  let current = await api.readStorageClass({ name: scope.storageClass });
  // A class made by an older start binds Immediately; the mode is immutable, so it is made again
  // (volumes already bound keep theirs).
  if (current.provisioner === scope.provisioner && current.volumeBindingMode !== wanted.volumeBindingMode) {
    await ignore(404, api.deleteStorageClass({ name: scope.storageClass }));
    await api.createStorageClass({ body: wanted });
    current = await api.readStorageClass({ name: scope.storageClass });
  }
  if (current.provisioner !== scope.provisioner) {
    throw new StorageError(
      'ERR_STORAGE_CLASS',
      `StorageClass ${scope.storageClass} exists with provisioner ${current.provisioner}`,
    );
  }
}

function claimName(volume: V1PersistentVolume): string {
  return `${volume.spec?.claimRef?.namespace}/${volume.spec?.claimRef?.name}`;
}
