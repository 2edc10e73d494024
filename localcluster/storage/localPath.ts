/**
 * The cluster's default StorageClass `standard`, as kind ships it: rancher's local-path-provisioner
 * (built by tools/build.sh from its Go module), run as a process on the machine with a kubeconfig,
 * as the control plane's other controllers are here. Its ConfigMap gives each node a directory of
 * its own; its helper Pods (BusyBox) make and remove each volume's directory on the claim's node.
 */
import path from 'node:path';
import { CoreV1Api, StorageV1Api } from '@kubernetes/client-node';
import type { V1ConfigMap, V1StorageClass } from '@kubernetes/client-node';
import { startProcess, waitReady } from '../controlplane/process.ts';
import { binary } from '../controlplane/tools.ts';
import { BUSYBOX_IMAGE } from '../images.ts';
import type { ControllerOptions } from '../types.ts';
import { ignore, StorageError } from './errors.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

/** The provisioner's name on the class and on each volume it makes (upstream's default). */
export const LOCAL_PATH_PROVISIONER = 'rancher.io/local-path';
/** The default class, named as kind names it. */
export const STANDARD_CLASS = 'standard';
/** Where its ConfigMap, ServiceAccount and helper Pods live (upstream's manifest's namespace). */
export const LOCAL_PATH_NAMESPACE = 'local-path-storage';
const CONFIG_MAP = 'local-path-config';
const SERVICE_ACCOUNT = 'local-path-provisioner-service-account';

/** Options of startLocalPath: the nodes it gives a directory each (the machine's file system is theirs too). */
export interface LocalPathOptions extends ControllerOptions {
  readonly nodes: readonly string[];
}

/** The running provisioner. */
export interface LocalPath {
  stop(): Promise<void>;
}

/** `dir/<node>` for every node, and `dir/other` for a node not listed (one a test adds). */
export function nodePathMap(dir: string, nodes: readonly string[]): { node: string; paths: string[] }[] {
  return [
    ...nodes.map((node) => ({ node, paths: [path.join(dir, node)] })),
    { node: 'DEFAULT_PATH_FOR_NON_LISTED_NODES', paths: [path.join(dir, 'other')] },
  ];
}

/** Upstream's ConfigMap (deploy/local-path-storage.yaml) with our paths and helper image. */
export function localPathConfig(dir: string, nodes: readonly string[]): V1ConfigMap {
  return {
    metadata: { name: CONFIG_MAP, namespace: LOCAL_PATH_NAMESPACE },
    data: {
      'config.json': JSON.stringify({ nodePathMap: nodePathMap(dir, nodes) }, null, 2),
      setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
      teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
      'helperPod.yaml': [
        'apiVersion: v1',
        'kind: Pod',
        'metadata:',
        '  name: helper-pod',
        'spec:',
        '  priorityClassName: system-node-critical',
        '  tolerations:',
        '    - key: node.kubernetes.io/disk-pressure',
        '      operator: Exists',
        '      effect: NoSchedule',
        '  containers:',
        '  - name: helper-pod',
        `    image: ${BUSYBOX_IMAGE}`,
        '    imagePullPolicy: IfNotPresent',
        '',
      ].join('\n'),
    },
  };
}

/** kind's default class: volumes of the node of the claim's first Pod, deleted with the claim. */
export function standardClass(): V1StorageClass {
  return {
    metadata: { name: STANDARD_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: LOCAL_PATH_PROVISIONER,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  };
}

/**
 * Makes the namespace, ServiceAccount, ConfigMap (written again: a restart may have other nodes or
 * dirs) and class, then starts the provisioner; resolves once its controller runs.
 */
export async function startLocalPath(opts: LocalPathOptions): Promise<LocalPath> {
  const dir = path.resolve(opts.dir);
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const namespace = LOCAL_PATH_NAMESPACE;
  await created(core.createNamespace({ body: { metadata: { name: namespace } } }));
  await created(core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: SERVICE_ACCOUNT } } }));
  const config = localPathConfig(path.join(dir, 'nodes'), opts.nodes);
  if (!(await created(core.createNamespacedConfigMap({ namespace, body: config }))))
    await core.replaceNamespacedConfigMap({ name: CONFIG_MAP, namespace, body: config });
  const storage = kc.makeApiClient(StorageV1Api);
  await created(storage.createStorageClass({ body: standardClass() }));
  const current = await storage.readStorageClass({ name: STANDARD_CLASS });
  if (current.provisioner !== LOCAL_PATH_PROVISIONER)
    throw new StorageError(
      'ERR_STORAGE_CLASS',
      `StorageClass ${STANDARD_CLASS} exists with provisioner ${current.provisioner}`,
    );

  // --debug: its "Provisioner started" line says the controller is about to run.
  const proc = await startProcess({
    name: 'local-path-provisioner',
    bin: await binary('local-path-provisioner'),
    dir,
    log: opts.log,
    args: [
      '--debug',
      'start',
      `--kubeconfig=${opts.kubeconfigPath}`,
      `--namespace=${namespace}`,
      `--configmap-name=${CONFIG_MAP}`,
      `--service-account-name=${SERVICE_ACCOUNT}`,
      `--helper-image=${BUSYBOX_IMAGE}`,
    ],
  });
  await waitReady(
    proc,
    () => Promise.resolve(proc.lastLines().some((l) => l.includes('Provisioner started')) || 'starting'),
    60_000,
  );
  return { stop: () => proc.stop() };
}

/** Awaits a create: true when made, false when it existed (409). */
const created = async (call: Promise<unknown>): Promise<boolean> => (await ignore(409, call)) !== undefined;
