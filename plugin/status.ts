/** `kubectl etcd status NAME`: gathers what the manager wrote about the cluster, and prints the report. */
import type { EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';
import type { Command } from './args.ts';
import { KubeClient } from './api.ts';
import { databaseSizes } from './manager-proxy.ts';
import { printObject } from './print.ts';
import { clusterReport, renderReport } from './report.ts';
import type { PluginIO } from './wait.ts';

type StatusCommand = Extract<Command, { command: 'status' }>;

/** Runs the command; resolves to the exit code. */
export async function runStatus(k: KubeClient, c: StatusCommand, io: PluginIO): Promise<number> {
  const ns = c.namespace ?? k.defaultNamespace;
  const cluster = await k.get<EtcdCluster>(KubeClient.path('EtcdCluster', ns, c.name));
  const list = <T>(kind: 'EtcdMember' | 'EtcdSnapshot' | 'EtcdSnapshotSchedule', query = '') =>
    k.get<{ items: T[] }>(`${KubeClient.path(kind, ns)}${query}`).then((l) => l.items);
  const [members, snapshots, schedules, sizes] = await Promise.all([
    list<EtcdMember>('EtcdMember', `?labelSelector=${encodeURIComponent(`etcd-operator.dev/cluster=${c.name}`)}`),
    list<EtcdSnapshot>('EtcdSnapshot'),
    list<EtcdSnapshotSchedule>('EtcdSnapshotSchedule'),
    databaseSizes(k, c, ns, c.name),
  ]);
  const report = clusterReport({ cluster, members, snapshots, schedules, sizes });
  if (c.output === 'text') io.stdout(renderReport(report, Date.now()));
  else printObject(io, report, c.output);
  return 0;
}
