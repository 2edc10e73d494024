/**
 * EtcdCluster: the cluster machine. Working a key feeds it its members, spec, claims, a
 * restore's Job, the upgrade snapshots and a fresh etcd probe; a cluster at rest is looked at
 * again on the probe schedule, one in a step at its progress deadline.
 */
import { ConditionReason, ConditionType } from '../../api/conditions.ts';
import { patchClusterStatus, restoreJobName } from '../../effects/kubernetes/index.ts';
import type { ClusterRef } from '../../effects/types.ts';
import { clusterMachine } from '../../machines/cluster.ts';
import { nextDefragTime } from '../../machines/cluster/maintenance/index.ts';
import { describeCluster, TAG } from '../../machines/index.ts';
import type { Probed } from '../etcd-probes.ts';
import { claimsListed, clusterObserved, membersListed, upgradeSnapshotsListed } from '../observe.ts';
import { jobObservation } from '../observe-snapshot.ts';
import type { RestKind } from '../probe-schedule.ts';
import { clusterStatus } from '../status.ts';
import { degradedDueAt } from '../status-degraded.ts';
import { WATCHES } from '../watches.ts';
import type { KindSpec } from './kind.ts';
import { wakeAt } from './_util.ts';

/** How soon a cluster whose etcd did not answer the probe is worked (and probed) again. */
const UNANSWERED_PROBE_MS = 5_000;

/** The EtcdCluster kind. */
export const clusterKind: KindSpec<'EtcdCluster'> = {
  kind: 'EtcdCluster',
  machineName: 'cluster',
  machine: clusterMachine,
  watch: WATCHES.clusters,
  wave: 1,
  identify(object) {
    const ref = {
      uid: object.metadata.uid ?? '',
      kind: 'EtcdCluster' as const,
      namespace: object.metadata.namespace ?? '',
      name: object.metadata.name ?? '',
    };
    const cluster: ClusterRef = { namespace: ref.namespace, name: ref.name, uid: ref.uid };
    // Fixed at creation, so the input of a new machine says it once for the machine's life.
    return { ref, cluster, input: { cluster: { ...cluster, ...(object.spec.tls?.peer ? { peerTLS: true } : {}) } } };
  },
  status: clusterStatus,
  patch: (ctx, _name, status, current) => patchClusterStatus(ctx, status, current),
  describe: describeCluster,
  // One Event when a recovery ends, refused (Warning, with why) or done: what a user asked for, answered.
  warning(before, after) {
    const was = before?.conditions?.find((x) => x.type === ConditionType.Recovered);
    const now = after.conditions?.find((x) => x.type === ConditionType.Recovered);
    if (
      !now ||
      now.reason === ConditionReason.Recovering ||
      (was?.reason === now.reason && was.message === now.message)
    )
      return;
    return {
      type: now.status === 'True' ? 'Normal' : 'Warning',
      reason: now.reason,
      note: now.message,
      action: 'Recover',
    };
  },
  async work(key, object, w) {
    const ns = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    // Before anything may call etcd (recovering an intent included): the certificate to call it with.
    const tlsProblem = await w.certs.refresh(object);
    const trust = await w.trust.refresh(object);
    const entry = await w.entry(clusterKind, key, object);
    let probed: Probed = 'none';
    const moved = await w.step(entry, async () => {
      // Each observation is read from the caches as it is fed, and stamped then: one fed after the
      // intents of an earlier one ran is as new as that, and its step is timed from it.
      const { now, caches } = w;
      const feed = (e: Parameters<typeof entry.runner.feed>[0]) => entry.runner.feed(e);
      // The machine decides nothing until it has both (a journal-less one adopts what it finds).
      await feed(membersListed(name, w.membersOf(ns, name), now(), (member) => caches.pods.get(ns, member)));
      await feed(clusterObserved(object, now(), trust));
      await feed(
        claimsListed(
          name,
          caches.pvcs.list().filter((p) => p.metadata?.namespace === ns),
          now(),
        ),
      );
      if (object.spec.bootstrap?.restore) {
        const pods = caches.jobPods.list().filter((p) => p.metadata?.namespace === ns);
        const job = jobObservation(caches.jobs.get(ns, restoreJobName(name)), pods);
        await feed({ type: 'k8s.restoreJob.observed', at: now(), job });
      }
      const inNamespace = caches.EtcdSnapshot.list().filter((s) => s.metadata.namespace === ns);
      await feed(upgradeSnapshotsListed(name, inNamespace, now()));
      probed = object.metadata.deletionTimestamp ? 'none' : await w.probes.probe(entry, object, tlsProblem);
      // etcd unanswered (not up yet, or no usable certificate: a Secret cert-manager is still
      // writing): no watch event says when that changes, so ask again soon. No member Pod with an
      // address is not such a case: the Pods' watch says when one has one.
      if (probed === 'unanswered' || probed === 'noCertificate') w.queue.addAfter(key, UNANSWERED_PROBE_MS);
    });
    const { snapshot } = entry.runner;
    const context = snapshot.context;
    // Woken at the next defragmentation fire time: what it is fed then carries that time (`at`).
    wakeAt(w, key, nextDefragTime(context));
    // Woken when a voter's or a member's trouble reaches the grace, so Degraded says so then.
    wakeAt(w, key, degradedDueAt(context, w.now()));
    if (moved) {
      w.rest.reset(entry.cluster.uid);
      w.queue.add(key);
    } else if (snapshot.hasTag(TAG.idle)) {
      const delay = w.rest.next(entry.cluster.uid, restKind(snapshot, probed));
      if (delay !== null) w.queue.addAfter(key, delay);
    } else
      w.queue.addAfter(
        key,
        Math.max(0, context.stepStartedAt + context.progressDeadlineSeconds * 1000 - w.now()) + 1000,
      );
  },
  forget(uid, w) {
    w.probes.forget(uid);
    w.rest.reset(uid);
    w.certs.forget(uid);
    w.trust.forget(uid);
  },
};

/** How the probe schedule reads a cluster at rest after its work: by its tags. */
function restKind(snapshot: { hasTag(tag: string): boolean }, probed: Probed): RestKind {
  if (snapshot.hasTag(TAG.dormant) && probed === 'none') return 'dormant';
  return snapshot.hasTag(TAG.settled) && probed === 'same' ? 'quiet' : 'resting';
}
