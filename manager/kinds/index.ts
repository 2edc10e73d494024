/**
 * The kinds of object the manager runs a machine for: one entry each, checked complete against
 * KindTypes. The controller watches each entry's collection and works its keys through the
 * entry; ObjectRunners builds and writes each status through it.
 */
import { clusterKind } from './cluster.ts';
import type { KindName, KindSpec } from './kind.ts';
import { memberKind } from './member.ts';
import { scheduleKind } from './schedule.ts';
import { snapshotKind } from './snapshot.ts';

export type * from './kind.ts';

/** Every kind, by name; a kind of KindTypes without an entry fails to compile here. */
export const KINDS: { readonly [K in KindName]: KindSpec<K> } = {
  EtcdCluster: clusterKind,
  EtcdMember: memberKind,
  EtcdSnapshot: snapshotKind,
  EtcdSnapshotSchedule: scheduleKind,
};

/** Whether `kind` (the first part of a work-queue key) names a kind. */
export const isKindName = (kind: string): kind is KindName => Object.hasOwn(KINDS, kind);
