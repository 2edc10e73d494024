/**
 * The local cluster's storage provisioner against the real API server and controller manager:
 * a second provisioner with its own class runs here, so the test can call wipe() on it.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOCAL_PATH_PROVISIONER, STANDARD_CLASS, startStorage, wipeVolume } from '../../localcluster/storage/index.ts';
import type { Storage } from '../../localcluster/types.ts';
import { until, untilGone } from '../../localcluster/until.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

const scope = { provisioner: 'etcd-operator.dev/e2e-storage', storageClass: 'e2e-storage', isDefault: false };
const ns = `storage-${process.pid}`;
let storage: Storage;
let dir: string;
let core: CoreV1Api;

function claim(name: string, size: string): V1PersistentVolumeClaim {
  return {
    metadata: { name, namespace: ns },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: scope.storageClass,
      resources: { requests: { storage: size } },
    },
  };
}

async function bound(name: string): Promise<V1PersistentVolumeClaim> {
  return until(`claim ${name} bound`, async () => {
    const pvc = await core.readNamespacedPersistentVolumeClaim({ name, namespace: ns });
    return pvc.status?.phase === 'Bound' ? pvc : undefined;
  });
}

async function hostDir(pvc: V1PersistentVolumeClaim): Promise<string> {
  const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
  return pv.spec?.hostPath?.path ?? '';
}

beforeAll(async () => {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  core = kc.makeApiClient(CoreV1Api);
  dir = await mkdtemp(path.join(os.tmpdir(), 'e2e-storage-'));
  storage = await startStorage({ dir, kubeconfigPath: inject('kubeconfig') }, scope);
  await core.createNamespace({ body: { metadata: { name: ns } } });
});

afterAll(async () => {
  await core?.deleteNamespace({ name: ns }).catch(() => undefined);
  await storage?.stop();
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfig'));
  await kc
    .makeApiClient(StorageV1Api)
    .deleteStorageClass({ name: scope.storageClass })
    .catch(() => undefined);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('storage provisioner', () => {
  it('binds a new claim to a volume of the requested size whose directory exists', async () => {
    const started = performance.now();
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('data-a', '64Mi') });
    const pvc = await bound('data-a');
    console.log(`storage: claim created -> Bound in ${Math.round(performance.now() - started)} ms`);
    expect(pvc.status?.capacity?.['storage']).toBe('64Mi');
    const data = await hostDir(pvc);
    expect(data.startsWith(path.join(dir, 'volumes'))).toBe(true);
    expect(existsSync(data)).toBe(true);
  });

  it('deletes the volume and its data when the claim is deleted', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('data-b', '16Mi') });
    const pvc = await bound('data-b');
    const data = await hostDir(pvc);
    await writeFile(path.join(data, 'member'), 'etcd data');
    const started = performance.now();
    await core.deleteNamespacedPersistentVolumeClaim({ name: 'data-b', namespace: ns });
    await until('volume deleted', async () => {
      const gone = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' }).then(
        () => false,
        () => true,
      );
      return gone ? true : undefined;
    });
    console.log(`storage: claim deleted -> volume gone in ${Math.round(performance.now() - started)} ms`);
    expect(existsSync(data)).toBe(false);
  });

  it('wipe() empties the bound volume and keeps the claim bound', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('data-c', '16Mi') });
    const data = await hostDir(await bound('data-c'));
    await writeFile(path.join(data, 'db'), 'x');
    await mkdir(path.join(data, 'member', 'snap'), { recursive: true });
    await writeFile(path.join(data, 'member', 'snap', 'db'), 'y');
    await storage.wipe(ns, 'data-c');
    expect(await readdir(data)).toEqual([]);
    expect((await bound('data-c')).spec?.volumeName).toBeTruthy();
  });

  it.skipIf(!inject('clusterHasNode'))(
    "a claim without a class gets the default class standard (local-path-provisioner): a directory in its node's path, wiped by any process, gone with the claim",
    { timeout: 180_000 },
    async () => {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: ns,
        body: {
          metadata: { name: 'data-default' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '8Mi' } } },
        },
      });
      // The default class waits for the claim's first consumer: kube-scheduler places this Pod,
      // names its node on the claim, and the volume is made for that node.
      await core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: 'consumer' },
          spec: {
            containers: [{ name: 'main', image: 'none' }],
            volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data-default' } }],
          },
        },
      });
      const pvc = await bound('data-default');
      expect(pvc.spec?.storageClassName).toBe(STANDARD_CLASS);
      // kube-scheduler binds the Pod once its claim is bound: wait for that, not just the claim.
      const node = await until(
        'the consumer Pod bound to a node',
        async () => (await core.readNamespacedPod({ name: 'consumer', namespace: ns })).spec?.nodeName,
      );
      expect(pvc.metadata?.annotations?.['volume.kubernetes.io/selected-node']).toBe(node);
      const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
      expect(pv.metadata?.annotations?.['pv.kubernetes.io/provisioned-by']).toBe(LOCAL_PATH_PROVISIONER);
      expect(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0]?.values).toEqual([node]);
      const data = await hostDir(pvc);
      // The node's helper Pod made it, in the directory the provisioner's ConfigMap gives that node.
      expect(path.basename(path.dirname(data))).toBe(node);
      expect(path.basename(data)).toBe(`${pvc.spec?.volumeName}_${ns}_data-default`);
      await writeFile(path.join(data, 'db'), 'x');
      expect(await wipeVolume(inject('kubeconfig'), ns, 'data-default')).toBe(data);
      expect(await readdir(data)).toEqual([]);

      await core.deleteNamespacedPod({ name: 'consumer', namespace: ns, gracePeriodSeconds: 0 });
      await core.deleteNamespacedPersistentVolumeClaim({ name: 'data-default', namespace: ns });
      await untilGone('the volume deleted', () => core.readPersistentVolume({ name: pv.metadata?.name ?? '' }));
      expect(existsSync(data)).toBe(false);
    },
  );

  it('wipe() of a claim that does not exist says so', async () => {
    await expect(storage.wipe(ns, 'no-such-claim')).rejects.toMatchObject({ code: 'ERR_WIPE_NO_CLAIM' });
  });

  it('grows the volume and the claim when the claim asks for more', async () => {
    await core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: claim('data-d', '16Mi') });
    const pvc = await bound('data-d');
    await core.patchNamespacedPersistentVolumeClaim({
      name: 'data-d',
      namespace: ns,
      body: [{ op: 'replace', path: '/spec/resources/requests/storage', value: '32Mi' }],
    });
    const grown = await until('claim grown', async () => {
      const now = await core.readNamespacedPersistentVolumeClaim({ name: 'data-d', namespace: ns });
      return now.status?.capacity?.['storage'] === '32Mi' ? now : undefined;
    });
    const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
    expect(pv.spec?.capacity?.['storage']).toBe('32Mi');
    expect(grown.status?.phase).toBe('Bound');
  });
});
