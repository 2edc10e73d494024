/**
 * What the controller watches, as data: each collection's API, the label only its objects
 * carry (when it watches only those), and which machine keys a change to one of its objects concerns.
 */
import type { V1Job, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdMember, EtcdSnapshot, EtcdSnapshotSchedule } from '../api/v1alpha1/index.ts';
import { LABEL, type KubeClients } from '../effects/kubernetes/index.ts';
import { GROUP, PLURAL, VERSION } from '../effects/kubernetes/meta.ts';
import type { Listed } from './informer.ts';

/** The work-queue key of an EtcdCluster. */
export const clusterKey = (ns: string, name: string): string => `EtcdCluster/${ns}/${name}`;
/** The work-queue key of an EtcdMember. */
export const memberKey = (ns: string, name: string): string => `EtcdMember/${ns}/${name}`;
/** The work-queue key of an EtcdSnapshot. */
export const snapshotKey = (ns: string, name: string): string => `EtcdSnapshot/${ns}/${name}`;
/** The work-queue key of an EtcdSnapshotSchedule. */
export const scheduleKey = (ns: string, name: string): string => `EtcdSnapshotSchedule/${ns}/${name}`;

/** What routing needs to know beyond the object itself. */
export interface Routing {
  /** The EtcdMembers of a cluster, from the members' cache. */
  membersOf(namespace: string, cluster: string): readonly EtcdMember[];
  /** The EtcdSnapshots of a cluster, from the snapshots' cache. */
  snapshotsOf(namespace: string, cluster: string): readonly EtcdSnapshot[];
}

/** Where a collection is served: the operator's own resources, or the core API. */
export type CollectionApi =
  | { readonly api: 'custom'; readonly plural: string }
  | { readonly api: 'core'; readonly plural: 'pods' | 'persistentvolumeclaims' }
  | { readonly api: 'batch'; readonly plural: 'jobs' };

/** One watched collection. */
export interface WatchSpec<T> {
  /** For logs and metrics, and the collection's plural. */
  readonly resource: string;
  readonly collection: CollectionApi;
  /** Only objects with this label are watched (a label selector); all when absent. */
  readonly selector?: string;
  /** The machine keys a change to `object` concerns. */
  readonly route: (object: T, routing: Routing) => string[];
}

type Labelled = { metadata?: { namespace?: string; labels?: Record<string, string> } };

/** A Pod or claim concerns its member and its cluster, named by its labels. */
const byLabels = (o: Labelled): string[] => {
  const cluster = o.metadata?.labels?.[LABEL.cluster];
  const member = o.metadata?.labels?.[LABEL.member];
  const n = o.metadata?.namespace ?? '';
  return [...(member ? [memberKey(n, member)] : []), ...(cluster ? [clusterKey(n, cluster)] : [])];
};

/** A Job of the operator, or one of its Pods, concerns the snapshot or the restored cluster its labels name. */
const byJobLabels = (o: Labelled): string[] => {
  const n = o.metadata?.namespace ?? '';
  const snapshot = o.metadata?.labels?.[LABEL.snapshot];
  const restore = o.metadata?.labels?.[LABEL.restore];
  return [...(snapshot ? [snapshotKey(n, snapshot)] : []), ...(restore ? [clusterKey(n, restore)] : [])];
};

/** The objects of each owned collection. */
export interface Owned {
  readonly pods: V1Pod;
  readonly pvcs: V1PersistentVolumeClaim;
  readonly jobs: V1Job;
  readonly jobPods: V1Pod;
}

/** The collections of objects the operator makes for its own: watched, with no machine of their own. */
export const OWNED: { readonly [N in keyof Owned]: WatchSpec<Owned[N]> } = {
  pods: {
    resource: 'pods',
    collection: { api: 'core', plural: 'pods' },
    selector: LABEL.cluster,
    route: byLabels,
  },
  pvcs: {
    resource: 'persistentvolumeclaims',
    collection: { api: 'core', plural: 'persistentvolumeclaims' },
    selector: LABEL.cluster,
    route: byLabels,
  },
  // The operator's Jobs (snapshots, their deletion, a restore's check), and their Pods (the
  // agent's report is the Pod's termination message). Not under the cluster label: the Services
  // and the scale selector must not count them as members.
  jobs: {
    resource: 'jobs',
    collection: { api: 'batch', plural: 'jobs' },
    selector: LABEL.job,
    route: byJobLabels,
  },
  jobPods: {
    resource: 'job-pods',
    collection: { api: 'core', plural: 'pods' },
    selector: LABEL.job,
    route: byJobLabels,
  },
};

/** Every collection the controller watches: each kind's own (its entry in kinds/ points here) and the owned ones. */
export const WATCHES = {
  clusters: {
    resource: 'etcdclusters',
    collection: { api: 'custom', plural: PLURAL.cluster },
    // A spec edit (a generation the status has not caught up with) also goes to the members:
    // one stopped on a failure tries again when its cluster changes. Every change goes to the
    // cluster's snapshots: one waits for its cluster, or refuses one being deleted.
    route: (c, routing) => {
      const [n, name] = [c.metadata.namespace ?? '', c.metadata.name ?? ''];
      const edited = c.metadata.generation !== c.status?.observedGeneration;
      const members = edited ? routing.membersOf(n, name) : [];
      return [
        clusterKey(n, name),
        ...members.map((m) => memberKey(n, m.metadata.name ?? '')),
        ...routing.snapshotsOf(n, name).map((s) => snapshotKey(n, s.metadata.name ?? '')),
      ];
    },
  } satisfies WatchSpec<EtcdCluster>,
  members: {
    resource: 'etcdmembers',
    collection: { api: 'custom', plural: PLURAL.member },
    route: (m) => [
      memberKey(m.metadata.namespace ?? '', m.metadata.name ?? ''),
      clusterKey(m.metadata.namespace ?? '', m.spec.cluster),
    ],
  } satisfies WatchSpec<EtcdMember>,
  snapshots: {
    resource: 'etcdsnapshots',
    collection: { api: 'custom', plural: PLURAL.snapshot },
    // A snapshot a schedule made also concerns the schedule: its phase decides the next run and
    // retention; one a rolling upgrade takes first concerns its cluster, whose roll waits for it.
    route: (s) => {
      const n = s.metadata.namespace ?? '';
      const schedule = s.metadata.labels?.[LABEL.schedule];
      const upgrading = s.metadata.labels?.[LABEL.upgradeTo] ? s.metadata.labels[LABEL.cluster] : undefined;
      return [
        snapshotKey(n, s.metadata.name ?? ''),
        ...(schedule ? [scheduleKey(n, schedule)] : []),
        ...(upgrading ? [clusterKey(n, upgrading)] : []),
      ];
    },
  } satisfies WatchSpec<EtcdSnapshot>,
  schedules: {
    resource: 'etcdsnapshotschedules',
    collection: { api: 'custom', plural: PLURAL.schedule },
    route: (s) => [scheduleKey(s.metadata.namespace ?? '', s.metadata.name ?? '')],
  } satisfies WatchSpec<EtcdSnapshotSchedule>,
  ...OWNED,
};

/** The collection's API path, in one namespace or all. */
export function collectionPath(c: CollectionApi, namespace: string | undefined): string {
  const ns = namespace ? `namespaces/${namespace}/` : '';
  if (c.api === 'custom') return `/apis/${GROUP}/${VERSION}/${ns}${c.plural}`;
  return c.api === 'batch' ? `/apis/batch/v1/${ns}${c.plural}` : `/api/v1/${ns}${c.plural}`;
}

/** Lists the collection, in one namespace or all, with the label selector when given. */
export async function listCollection<T>(
  kube: KubeClients,
  c: CollectionApi,
  namespace: string | undefined,
  labelSelector: string | undefined,
): Promise<Listed<T>> {
  if (c.api === 'custom') {
    const req = { group: GROUP, version: VERSION, plural: c.plural, labelSelector };
    const r = (await (namespace
      ? kube.custom.listNamespacedCustomObject({ ...req, namespace })
      : kube.custom.listClusterCustomObject(req))) as { items: T[]; metadata: { resourceVersion: string } };
    return { items: r.items, resourceVersion: r.metadata.resourceVersion };
  }
  const q = { labelSelector };
  if (c.api === 'batch') {
    const jobs = await (namespace
      ? kube.batch.listNamespacedJob({ ...q, namespace })
      : kube.batch.listJobForAllNamespaces(q));
    return { items: jobs.items as T[], resourceVersion: jobs.metadata?.resourceVersion ?? '' };
  }
  const r =
    c.plural === 'pods'
      ? await (namespace ? kube.core.listNamespacedPod({ ...q, namespace }) : kube.core.listPodForAllNamespaces(q))
      : await (namespace
          ? kube.core.listNamespacedPersistentVolumeClaim({ ...q, namespace })
          : kube.core.listPersistentVolumeClaimForAllNamespaces(q));
  return { items: r.items as T[], resourceVersion: r.metadata?.resourceVersion ?? '' };
}
