/**
 * EtcdMember: the member machine. Working a key feeds it its spec, its Pod, its claim, a
 * data-loss report and what the cluster's last etcd probe says about it.
 */
import { patchMemberStatus, pvcName } from '../../effects/kubernetes/index.ts';
import { controllerUid } from '../../effects/kubernetes/meta.ts';
import { describeMember, etcdMemberFor, memberMachine, type ClusterObjectRef } from '../../machines/index.ts';
import { dataLostObserved } from '../data-check.ts';
import { memberStatus, newlyStuck, stuckDueAt } from '../member-status.ts';
import { memberObserved, podObserved, pvcObserved } from '../observe.ts';
import { WATCHES } from '../watches.ts';
import { statusByPath, wakeAt } from './_util.ts';
import type { KindSpec } from './kind.ts';

/** The EtcdMember kind. */
export const memberKind: KindSpec<'EtcdMember'> = {
  kind: 'EtcdMember',
  machineName: 'member',
  machine: memberMachine,
  watch: WATCHES.members,
  wave: 0,
  // Its cluster tells whether peer URLs are https.
  identify(object, owner) {
    const namespace = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const uid = object.metadata.uid ?? '';
    const ref = { uid, kind: 'EtcdMember' as const, namespace, name, cluster: object.spec.cluster };
    const cluster = { namespace, name: object.spec.cluster, uid: controllerUid(object.metadata) ?? '' };
    const input = {
      member: {
        namespace,
        name,
        uid,
        cluster: object.spec.cluster,
        ...(owner?.spec.tls?.peer ? { peerTLS: true } : {}),
      },
      bootstrap: object.spec.bootstrap,
      medium: object.spec.storage.medium ?? '',
    };
    return { ref, cluster, input };
  },
  status: statusByPath(memberStatus),
  patch: patchMemberStatus,
  describe: describeMember,
  // One Warning when its Pod or claim gets stuck, or stuck for another reason: the why, at once.
  warning(before, after) {
    const stuck = newlyStuck(before?.conditions, after.conditions);
    return stuck && { type: 'Warning', reason: stuck.reason, note: stuck.message, action: 'Observe' };
  },
  // What was read of its volume's node and its claim's Warnings is swept with the other reads past their age.
  forget(_, w) {
    w.volumeNodes.sweep();
    w.claimWarnings.sweep();
  },
  async work(key, object, w) {
    const ns = object.metadata.namespace ?? '';
    const name = object.metadata.name ?? '';
    const owner = w.caches.EtcdCluster.get(ns, object.spec.cluster);
    if (owner) await w.certs.refresh(owner);
    const entry = await w.entry(memberKind, key, object, owner);
    const moved = await w.step(entry, async () => {
      // Stamped as each is fed (see the cluster kind).
      const { now, caches } = w;
      const pod = caches.pods.get(ns, name);
      await entry.runner.feed(memberObserved(object, owner, now()));
      // What etcd says of it is told before its Pod's absence: a member etcd says has started is
      // never given a Pod that takes an empty volume for a first start.
      const probe = w.probes.get(entry.cluster.uid);
      if (probe) {
        const ref: ClusterObjectRef = {
          namespace: ns,
          name: object.spec.cluster,
          uid: entry.cluster.uid,
          peerTLS: entry.runner.snapshot.context.member.peerTLS === true,
        };
        const member = etcdMemberFor(ref, probe, name) ?? null;
        await entry.runner.feed({ type: 'etcd.member.observed', at: now(), member });
      }
      const claim = object.spec.storage.medium !== 'Memory' ? caches.pvcs.get(ns, pvcName(name)) : undefined;
      // A Pod that does not run: is its claim tied to a node that is gone (manager/volume-nodes.ts)?
      const volume = claim ? await w.volumeNodes.check(claim, pod) : {};
      // A Pending claim: the newest Warning on it says why.
      const pending = await w.claimWarnings.check(claim);
      for (const again of [volume.againMs, pending.againMs]) if (again !== undefined) w.queue.addAfter(key, again);
      const claimed = (): Promise<void> =>
        entry.runner.feed(pvcObserved(claim, now(), { lostNode: volume.lost, warning: pending.warning }));
      // A lost node is told before the Pod's absence, so no Pod is made that could only stay Pending.
      if (volume.lost) await claimed();
      await entry.runner.feed(podObserved(pod, now()));
      if (object.spec.storage.medium !== 'Memory' && !volume.lost) await claimed();
      const lost = dataLostObserved(pod, now());
      if (lost) await entry.runner.feed(lost);
    });
    // Woken when waiting to be scheduled, or for its claim, has lasted long enough to be Stuck.
    wakeAt(w, key, stuckDueAt(entry.runner.snapshot.context, w.now()));
    if (moved) w.queue.add(key);
  },
};
