/** What the kinds' entries share: waking a key at a fire time, identities by spec.clusterRef, statuses by state path. */
import type { ObjectKind } from '../../journal/index.ts';
import type { Identity, KindName, KindSpec, KindStep, KindWork, StatusOf } from './kind.ts';

/** Longest a key sleeps before it is looked at again, however far its next fire time (timers cap near 24.8 days). */
export const SCHEDULE_LOOK_MS = 3_600_000;

/** Works `key` again just after `at` (epoch ms), or within `capMs` when that is further; nothing when null. */
export function wakeAt(w: KindWork, key: string, at: number | null, capMs = SCHEDULE_LOOK_MS): void {
  if (at !== null) w.queue.addAfter(key, Math.min(Math.max(0, at - w.now()) + 1, capMs));
}

/** An object that names its cluster by spec.clusterRef. */
interface ClusterReferring {
  readonly metadata: { readonly namespace?: string; readonly name?: string; readonly uid?: string };
  readonly spec: { readonly clusterRef: { readonly name: string } };
}

/**
 * The journal's ref and the machine's input (`{ [inputKey]: { namespace, name, uid, cluster } }`)
 * of an object that names its cluster by spec.clusterRef (a snapshot, a schedule); its handlers
 * act on its own objects, never on the cluster: no cluster uid to check.
 */
export function clusterRefIdentity(kind: ObjectKind, inputKey: string, object: ClusterReferring): Identity {
  const namespace = object.metadata.namespace ?? '';
  const name = object.metadata.name ?? '';
  const clusterName = object.spec.clusterRef.name;
  const uid = object.metadata.uid ?? '';
  return {
    ref: { uid, kind, namespace, name, cluster: clusterName },
    cluster: { namespace, name: clusterName, uid: '' },
    input: { [inputKey]: { namespace, name, uid, cluster: clusterName } },
  };
}

/** A status builder that reads the state path the step ended in, its context and the generation. */
type ByPath<K extends KindName> = (
  previous: StatusOf<K> | undefined,
  step: { readonly path: string; readonly context: KindStep<K>['context']; readonly generation: number },
  now: number,
) => StatusOf<K>;

/** A kind's `status` from a builder that reads only the state path it ended in (every kind's but the cluster's). */
export const statusByPath =
  <K extends KindName>(build: ByPath<K>): KindSpec<K>['status'] =>
  (current, step, now) =>
    build(current, { path: step.to, context: step.context, generation: step.generation }, now);
