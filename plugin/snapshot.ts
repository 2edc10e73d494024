/**
 * `kubectl etcd snapshot NAME`: an EtcdSnapshot of the cluster, to the destination given, the
 * one of its EtcdSnapshotSchedule, or of spec.upgrade.snapshot; then waits for the verdict.
 */
import type { EtcdCluster, EtcdSnapshot, EtcdSnapshotSchedule, SnapshotDestination } from '../api/v1alpha1/index.ts';
import { MAX_SNAPSHOT_NAME } from '../api/v1alpha1/index.ts';
import type { Command } from './args.ts';
import { GROUP_VERSION, KubeClient } from './api.ts';
import { PluginError } from './errors.ts';
import { printObject } from './print.ts';
import { waitFor, type PluginIO } from './wait.ts';

type SnapshotCommand = Extract<Command, { command: 'snapshot' }>;

/** Where the snapshot goes: the flags, --like, the cluster's one schedule, or its upgrade snapshot. */
export function chooseDestination(
  c: Pick<SnapshotCommand, 'destination' | 'name'>,
  cluster: EtcdCluster,
  schedules: readonly EtcdSnapshotSchedule[],
  like: EtcdSnapshot | undefined,
): { destination: SnapshotDestination; from: string } {
  if (c.destination) return { destination: c.destination as SnapshotDestination, from: 'the command line' };
  if (like) return { destination: like.spec.destination, from: `EtcdSnapshot ${like.metadata.name}` };
  const mine = schedules.filter((s) => s.spec.clusterRef.name === c.name);
  if (mine.length === 1 && mine[0]) {
    return { destination: mine[0].spec.destination, from: `EtcdSnapshotSchedule ${mine[0].metadata.name}` };
  }
  const upgrade = cluster.spec.upgrade?.snapshot?.destination;
  if (upgrade && mine.length === 0) return { destination: upgrade, from: 'spec.upgrade.snapshot' };
  throw new PluginError(
    'ERR_NO_DESTINATION',
    `where should the snapshot go? ${
      mine.length > 1
        ? `${c.name} has ${mine.length} EtcdSnapshotSchedules (${mine.map((s) => s.metadata.name).join(', ')}): pick one's with --like SNAPSHOT, or`
        : `${c.name} has no EtcdSnapshotSchedule or spec.upgrade.snapshot to take it from:`
    } give --pvc CLAIM[/DIR], or --s3 s3://BUCKET/PREFIX --s3-credentials SECRET [--s3-endpoint URL --s3-path-style], or --like SNAPSHOT`,
  );
}

/** `CLUSTER-YYYYMMDD-HHMMSS`, short enough for an EtcdSnapshot. */
export function snapshotName(cluster: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${cluster.slice(0, MAX_SNAPSHOT_NAME - stamp.length - 1)}-${stamp}`.toLowerCase();
}

/** The verdict of an EtcdSnapshot, or what it is doing. */
export function snapshotLook(s: EtcdSnapshot): { done: EtcdSnapshot } | { progress: string } {
  const phase = s.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return { done: s };
  const progressing = s.status?.conditions?.find((c) => c.type === 'Progressing');
  const where = s.status?.member ? ` from ${s.status.member}` : '';
  return {
    progress: `${phase ?? 'Pending'}${where}: ${progressing?.message ?? 'waiting for the operator to take it'}`,
  };
}

/** Why a failed snapshot failed, in its own words. */
export function failureOf(s: EtcdSnapshot): string {
  const c = s.status?.conditions ?? [];
  const why = c.find((x) => x.type === 'Degraded' && x.status === 'True') ?? c.find((x) => x.type === 'Complete');
  return why?.message || 'no reason given (kubectl describe etcdsnapshot shows its conditions)';
}

/** Runs the command; resolves to the exit code. */
export async function runSnapshot(
  k: KubeClient,
  c: SnapshotCommand,
  io: PluginIO,
  signal?: AbortSignal,
): Promise<number> {
  const ns = c.namespace ?? k.defaultNamespace;
  const cluster = await k.get<EtcdCluster>(KubeClient.path('EtcdCluster', ns, c.name));
  const schedules = c.destination
    ? []
    : (await k.get<{ items: EtcdSnapshotSchedule[] }>(KubeClient.path('EtcdSnapshotSchedule', ns))).items;
  const like = c.like ? await k.get<EtcdSnapshot>(KubeClient.path('EtcdSnapshot', ns, c.like)) : undefined;
  const { destination, from } = chooseDestination(c, cluster, schedules, like);
  const name = c.snapshotName ?? snapshotName(c.name, new Date());
  await k.create(KubeClient.path('EtcdSnapshot', ns), {
    apiVersion: GROUP_VERSION,
    kind: 'EtcdSnapshot',
    metadata: { name, labels: { 'app.kubernetes.io/created-by': 'kubectl-etcd' } },
    spec: {
      clusterRef: { name: c.name },
      destination,
      ...(c.deletionPolicy ? { deletionPolicy: c.deletionPolicy } : {}),
    },
  });
  io.stderr(`etcdsnapshot.etcd-operator.dev/${name} created (destination from ${from})\n`);
  if (!c.wait) {
    if (c.output !== 'text') printObject(io, await k.get(KubeClient.path('EtcdSnapshot', ns, name)), c.output);
    return 0;
  }
  const done = await waitFor(
    io,
    async () => snapshotLook(await k.get<EtcdSnapshot>(KubeClient.path('EtcdSnapshot', ns, name))),
    { timeoutMs: c.timeoutMs, ...(signal ? { signal } : {}) },
  );
  if (c.output !== 'text') printObject(io, done, c.output);
  if (done.status?.phase === 'Failed') {
    io.stderr(
      `EtcdSnapshot ${name} failed: ${failureOf(done)}\n` +
        `  kubectl describe etcdsnapshot ${name} -n ${ns}; kubectl etcd why ${c.name} -n ${ns} shows the steps\n`,
    );
    return 1;
  }
  const s = done.status ?? {};
  if (c.output === 'text') {
    io.stdout(
      `EtcdSnapshot ${name} Succeeded: ${s.size ?? '?'} bytes at ${s.location ?? '?'}, revision ${s.revision ?? '?'}, ` +
        `etcd ${s.etcdVersion ?? '?'}, sha256 ${s.sha256 ?? '?'}\n`,
    );
  }
  return 0;
}
