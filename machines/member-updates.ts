/**
 * What the member machine's steps write into its context, and the parameters of its intents,
 * as small pure functions of (context, event).
 */
import { stepUpdates, toAssigns, type Update } from './kit.ts';
import { failureKey, troubleSince, type MemberContext } from './member-decide.ts';
import { backoff, peerURL } from './policy.ts';
import type { ForceDeletePodParams } from './intents.ts';
import type { MemberEvent, MemberParams, RemoveEtcdMemberParams } from './types.ts';

type Of<T extends MemberEvent['type']> = Extract<MemberEvent, { type: T }>;

/** Context updates by name; each also moves `now` to the event's time (kit.ts). */
const updates = {
  observeMember: (_, e) => {
    const {
      dormant,
      deleting,
      clusterDeleting,
      generation,
      clusterGeneration,
      version,
      trust,
      forceNewCluster,
      alone,
    } = e as Of<'k8s.member.updated'>;
    return {
      dormant,
      ...(alone !== undefined ? { alone } : {}),
      deleting,
      clusterDeleting,
      generations: `${generation}/${clusterGeneration}`,
      ...(version !== undefined ? { version } : {}),
      ...(trust !== undefined ? { trust } : {}),
      forceNewCluster: forceNewCluster ?? null,
    };
  },
  observePod: (c, e) => {
    const { pod } = e as Of<'k8s.pod.observed'>;
    if (!pod) return { pod, podSeen: c.podSeen && c.podUID !== null, troubleSince: troubleSince({ ...c, pod }, e.at) };
    const podRestarts = c.podRestarts?.uid === pod.uid ? c.podRestarts : { uid: pod.uid, count: pod.restarts ?? 0 };
    // What a ready Pod runs is what the member runs: an upgrade is done once its new Pod is ready.
    const ready = pod.ready && !pod.deleting;
    const ran = ready && pod.version !== undefined ? { ranVersion: pod.version } : {};
    return {
      pod,
      podUID: pod.uid,
      podSeen: true,
      podRestarts,
      ...ran,
      // A ready Pod of this member ran etcd on its volume, whatever step sees it: a first start
      // seen Ready while its create was being retried (the create timed out, the Pod made) is
      // latched too, so a restart in place after it is rechecked, not taken for a first start.
      ...(ready ? { everRan: true } : {}),
      troubleSince: troubleSince({ ...c, pod }, e.at),
    };
  },
  observePVC: (c, e) => {
    const { bound, trouble, lostNode } = e as Of<'k8s.pvc.observed'>;
    const pvcTrouble = trouble ?? null;
    return {
      pvcBound: bound,
      pvcTrouble,
      pvcLostNode: lostNode ?? null,
      troubleSince: troubleSince({ ...c, pvcTrouble }, e.at),
    };
  },
  // etcd saying the member started is proof etcd ran on its volume, even when no Pod of it was
  // seen Ready (a manager stopped between the two): latched, so its next Pod expects the data.
  observeEtcd: (_, e) => {
    const { member } = e as Of<'etcd.member.observed'>;
    return { etcd: member, ...(member?.started ? { etcdStarted: true } : {}) };
  },
  observeDataLost: (_, e) => ({ dataLost: (e as Of<'member.data.lost'>).reason }),
  observeTime: () => ({}),
  ...stepUpdates,
  recordPod: (_, e) => {
    const uid = 'result' in e && e.result ? String(e.result.uid) : null;
    return { podUID: uid, podSeen: false };
  },
  markRan: () => ({ everRan: true, rechecks: 0 }),
  // The first forced check runs at once; one in a row after another waits, as a retry would.
  beginRecheck: (c) => {
    const rechecks = (c.rechecks ?? 0) + 1;
    return { rechecks, retryAt: c.now + (rechecks > 1 ? backoff(rechecks - 1) : 0) };
  },
  // Nothing is retried in `failed`: no back-off is left for the runtime to wake the machine for.
  markFailed: (c) => ({ failedWith: failureKey(c), retryAt: null }),
  clearFailed: () => ({ failedWith: null, attempts: 0, retryAt: null, lastError: null }),
  markLost: (c) => ({
    dataLost:
      c.dataLost ??
      (c.medium === 'Memory'
        ? 'the Pod of a member with storage.medium Memory went, and its data with it'
        : "the member's PersistentVolumeClaim is gone"),
  }),
} satisfies Record<string, Update<MemberContext, MemberEvent>>;

/** The updates as xstate assign actions, by name. */
export const assigns = toAssigns<MemberContext, MemberEvent, typeof updates>(updates);

type Ctx = { context: MemberContext };

/** Parameters of the intents, from the context. */
export const params = {
  member: ({ context: c }: Ctx): MemberParams => ({ member: c.member.name }),
  forced: ({ context: c }: Ctx): ForceDeletePodParams => ({ member: c.member.name, uid: c.pod?.uid ?? '' }),
  removal: ({ context: c }: Ctx): RemoveEtcdMemberParams => ({
    peerURL: peerURL(
      { namespace: c.member.namespace, name: c.member.cluster, peerTLS: c.member.peerTLS },
      c.member.name,
    ),
    memberID: c.etcd?.id ?? null,
    reason: 'its EtcdMember is being deleted',
  }),
};
