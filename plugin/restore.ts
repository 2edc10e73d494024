/**
 * `kubectl etcd restore SNAPSHOT --to NAME`: a new EtcdCluster that starts from the snapshot
 * (spec.bootstrap.restore.snapshotName, the API's one way to restore), its spec copied from the
 * cluster the snapshot was taken of (or --like CLUSTER). Printed as YAML to edit and apply, or
 * created with --apply and waited for until Available.
 */
import type { EtcdCluster, EtcdClusterSpec, EtcdSnapshot } from '../api/v1alpha1/index.ts';
import { MAX_CLUSTER_NAME } from '../api/v1alpha1/index.ts';
import type { Command } from './args.ts';
import { ApiError, GROUP_VERSION, KubeClient } from './api.ts';
import { PluginError } from './errors.ts';
import { printObject } from './print.ts';
import { waitFor, type PluginIO } from './wait.ts';

type RestoreCommand = Extract<Command, { command: 'restore' }>;

/** The restored cluster, and what was left out of the copied spec and why. */
export interface Restored {
  readonly cluster: EtcdCluster;
  readonly notes: readonly string[];
}

/** What a restored cluster keeps of `like`'s spec: all but how it starts and its certificates. */
export function restoredCluster(
  snapshot: EtcdSnapshot,
  to: string,
  like: EtcdCluster | undefined,
  o: { readonly replicas?: number | undefined; readonly version?: string | undefined } = {},
): Restored {
  if (snapshot.status?.phase !== 'Succeeded') {
    throw new PluginError(
      'ERR_SNAPSHOT_NOT_READY',
      `EtcdSnapshot ${snapshot.metadata.name} is ${snapshot.status?.phase ?? 'Pending'}, not Succeeded: only a stored and checked snapshot restores ` +
        `(kubectl describe etcdsnapshot ${snapshot.metadata.name})`,
    );
  }
  if (to.length > MAX_CLUSTER_NAME) {
    throw new PluginError('ERR_NAME_TOO_LONG', `--to ${to} is longer than ${MAX_CLUSTER_NAME} characters`);
  }
  const notes: string[] = [];
  const base: Partial<EtcdClusterSpec> = { ...(like?.spec ?? {}) };
  delete base.bootstrap;
  if (base.tls) {
    notes.push(
      `spec.tls of ${like?.metadata.name} is left out: its certificates name ${like?.metadata.name}'s members, not ${to}'s; add a spec.tls whose certificates cover *.${to}.${snapshot.metadata.namespace}.svc`,
    );
    delete base.tls;
    if (base.auth) notes.push('spec.auth is left out with it (etcd authentication needs client TLS)');
    delete base.auth;
  }
  const version = o.version ?? like?.spec.version ?? snapshot.status.etcdVersion;
  if (!version) throw new PluginError('ERR_NO_VERSION', 'which etcd version? give --version X.Y.Z');
  if (!like)
    notes.push(`no EtcdCluster ${snapshot.spec.clusterRef.name} to copy: storage is 1Gi; edit before applying`);
  const spec = {
    ...base,
    replicas: o.replicas ?? like?.spec.replicas ?? 3,
    version,
    storage: base.storage ?? { size: '1Gi' },
    bootstrap: { restore: { snapshotName: snapshot.metadata.name ?? '' } },
  } as EtcdClusterSpec;
  return {
    cluster: {
      apiVersion: GROUP_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: to, namespace: snapshot.metadata.namespace ?? '' },
      spec,
    },
    notes,
  };
}

/** The verdict of a restoring cluster, or what it is doing. */
export function restoreLook(c: EtcdCluster): { done: EtcdCluster } | { progress: string } {
  const conditions = c.status?.conditions ?? [];
  const available = conditions.find((x) => x.type === 'Available');
  if (available?.status === 'True') return { done: c };
  const progressing = conditions.find((x) => x.type === 'Progressing');
  const degraded = conditions.find((x) => x.type === 'Degraded' && x.status === 'True');
  const step = c.status?.observed?.step ?? progressing?.reason ?? 'Pending';
  return {
    progress: `${step}: ${progressing?.message ?? 'waiting for the operator'}${degraded ? ` (Degraded: ${degraded.message})` : ''}`,
  };
}

/** Runs the command; resolves to the exit code. */
export async function runRestore(
  k: KubeClient,
  c: RestoreCommand,
  io: PluginIO,
  signal?: AbortSignal,
): Promise<number> {
  const ns = c.namespace ?? k.defaultNamespace;
  const snapshot = await k.get<EtcdSnapshot>(KubeClient.path('EtcdSnapshot', ns, c.snapshot));
  const likeName = c.like ?? snapshot.spec.clusterRef.name;
  let like: EtcdCluster | undefined;
  try {
    like = await k.get<EtcdCluster>(KubeClient.path('EtcdCluster', ns, likeName));
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404) || c.like) throw err;
  }
  const { cluster, notes } = restoredCluster(snapshot, c.to, like, c);
  for (const n of notes) io.stderr(`note: ${n}\n`);
  if (!c.apply) {
    printObject(io, cluster, c.output === 'json' ? 'json' : 'yaml');
    io.stderr(`# kubectl apply -f the above, or run again with --apply\n`);
    return 0;
  }
  try {
    await k.create(KubeClient.path('EtcdCluster', ns), cluster);
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      throw new PluginError(
        'ERR_EXISTS',
        `EtcdCluster ${c.to} already exists in ${ns}: a restore makes a new cluster; pick another --to, or delete ${c.to} first`,
      );
    }
    throw err;
  }
  io.stderr(`etcdcluster.etcd-operator.dev/${c.to} created from EtcdSnapshot ${c.snapshot}\n`);
  if (!c.wait) return 0;
  const done = await waitFor(
    io,
    async () => restoreLook(await k.get<EtcdCluster>(KubeClient.path('EtcdCluster', ns, c.to))),
    { timeoutMs: c.timeoutMs, ...(signal ? { signal } : {}) },
  );
  if (c.output !== 'text') printObject(io, done, c.output);
  else io.stdout(`EtcdCluster ${c.to} is Available, restored from ${c.snapshot}\n`);
  return 0;
}
