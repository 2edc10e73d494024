/**
 * EtcdSnapshot: the snapshot machine. Working a key feeds it its spec, its cluster (and that
 * cluster's last etcd probe), its Job, its verify Job and its deletion Job.
 */
import {
  patchSnapshotStatus,
  snapshotDeleteJobName,
  snapshotJobName,
  verifyJobName,
} from '../../effects/kubernetes/index.ts';
import { describeSnapshot } from '../../machines/describe-snapshot.ts';
import { snapshotMachine } from '../../machines/snapshot.ts';
import { jobObservation, snapshotClusterObserved, snapshotObserved } from '../observe-snapshot.ts';
import { snapshotStatus } from '../snapshot-status.ts';
import { WATCHES } from '../watches.ts';
import { clusterRefIdentity, statusByPath } from './_util.ts';
import type { KindSpec } from './kind.ts';

/** The EtcdSnapshot kind. */
export const snapshotKind: KindSpec<'EtcdSnapshot'> = {
  kind: 'EtcdSnapshot',
  machineName: 'snapshot',
  machine: snapshotMachine,
  watch: WATCHES.snapshots,
  wave: 2,
  identify: (object) => clusterRefIdentity('EtcdSnapshot', 'snapshot', object),
  status: statusByPath(snapshotStatus),
  patch: patchSnapshotStatus,
  describe: describeSnapshot,
  async work(key, object, w) {
    const ns = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const entry = await w.entry(snapshotKind, key, object);
    const moved = await w.step(entry, async () => {
      const at = w.now();
      const { caches } = w;
      const cluster = caches.EtcdCluster.get(ns, object.spec.clusterRef.name);
      const probe = cluster ? w.probes.get(cluster.metadata.uid ?? '') : undefined;
      const pods = caches.jobPods.list().filter((p) => p.metadata?.namespace === ns);
      const restoring = (held: string) => {
        const holder = caches.EtcdCluster.get(ns, held);
        return holder !== undefined && !holder.metadata.deletionTimestamp;
      };
      await entry.runner.feed(snapshotObserved(object, at, restoring));
      await entry.runner.feed(snapshotClusterObserved(cluster, probe, at));
      const job = jobObservation(caches.jobs.get(ns, snapshotJobName(name)), pods, object);
      await entry.runner.feed({ type: 'k8s.job.observed', at, job });
      const deleteJob = jobObservation(caches.jobs.get(ns, snapshotDeleteJobName(name)), pods);
      await entry.runner.feed({ type: 'k8s.deleteJob.observed', at, job: deleteJob });
      const verifyJob = jobObservation(caches.jobs.get(ns, verifyJobName(name)), pods, undefined, true);
      await entry.runner.feed({ type: 'k8s.verifyJob.observed', at, job: verifyJob });
    });
    if (moved) w.queue.add(key);
  },
};
