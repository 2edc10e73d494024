/**
 * What the cluster machine knows and decides about a new cluster started whole (etcd's static
 * bootstrap): every member is named at once and started with one `--initial-cluster` listing
 * them all (`--initial-cluster-state new`, the cluster's UID as its token), each still its own
 * EtcdMember with its own machine. Invariants: the plan (names and initial cluster) is fixed, and
 * journaled, before the first member exists, so a resumed start creates the missing members with
 * the same initial cluster and etcd derives the same member and cluster IDs; the start ends once a
 * quorum of the planned members answers healthy, so a member whose Pod never starts does not hold
 * the cluster back (it waits, a voter etcd knows, and is replaced like any lost member if its node
 * goes). A restored cluster and a one-member cluster keep the seed path. Pure.
 */
import { memberName, peerURL, quorum, type PeerRef } from '../../policy.ts';
import type { EtcdMemberInfo, EtcdObservation } from '../../types.ts';

/** One member of the initial cluster. */
export interface StartMember {
  readonly name: string;
  readonly ordinal: number;
}

/** A static start: the members of the initial cluster, and the `--initial-cluster` every one of them gets. */
export interface StartPlan {
  readonly members: readonly StartMember[];
  readonly initialCluster: string;
}

/** What the cluster context holds for a static start; optional, so older journals read. */
export interface BootstrapContext {
  /** The start in flight; null or absent: none (done, or a seed-path bootstrap). */
  readonly start?: StartPlan | null;
}

/** What the start's rules read besides their own fields. */
export interface BootstrapView extends BootstrapContext {
  readonly cluster: PeerRef;
  readonly target: { readonly replicas: number } | null;
  readonly restore?: object;
  readonly nextOrdinal: number;
  readonly joining: { readonly member: string; readonly ordinal: number; readonly bootstrap: boolean } | null;
  /** Names of the EtcdMembers the machine created (and has not seen go). */
  readonly memberNames: readonly string[];
  readonly etcd: EtcdObservation | null;
  readonly etcdStale: boolean;
}

/** A new cluster starts whole: more than one member, not from a snapshot (a restore keeps its seed). */
export const startsWhole = (c: BootstrapView): boolean => c.restore === undefined && (c.target?.replicas ?? 0) > 1;

/**
 * A seed chosen and not created: what a journal written before static starts holds from entering
 * `seeding` (the seed was chosen there then) until its createMember.
 */
export const unmadeSeed = (c: Pick<BootstrapView, 'joining' | 'memberNames'>): boolean =>
  c.joining?.bootstrap === true && !c.memberNames.includes(c.joining.member);

/**
 * The plan of a start: `replicas` members from the next ordinal, or from the seed's ordinal when
 * such a journal chose one (it was never created, so its name is free).
 */
export function planStart(c: BootstrapView): StartPlan {
  const first = unmadeSeed(c) && c.joining ? c.joining.ordinal : c.nextOrdinal;
  const members = Array.from({ length: c.target?.replicas ?? 0 }, (_, i) => ({
    name: memberName(c.cluster.name, first + i),
    ordinal: first + i,
  }));
  return { members, initialCluster: members.map((m) => `${m.name}=${peerURL(c.cluster, m.name)}`).join(',') };
}

/** Whether the plan stands: once one of its members was created, every other gets the same initial cluster. */
export const planStands = (c: BootstrapView): boolean =>
  c.start?.members.some((m) => c.memberNames.includes(m.name)) ?? false;

/** The next planned member whose EtcdMember the machine has not created; undefined once all are. */
export const nextToCreate = (c: BootstrapView): StartMember | undefined =>
  c.start?.members.find((m) => !c.memberNames.includes(m.name));

/** The planned members as etcd lists them, by peer URL (by name too: etcd knows an initial cluster's names from the start). */
export function plannedInEtcd(c: BootstrapView): EtcdMemberInfo[] {
  const urls = new Set((c.start?.members ?? []).map((m) => peerURL(c.cluster, m.name)));
  return (c.etcd?.members ?? []).filter((m) => urls.has(m.peerURL));
}

/** Planned members that started and answer healthy (a member healthy is one that answered itself). */
export const startedHealthy = (c: BootstrapView): EtcdMemberInfo[] =>
  plannedInEtcd(c).filter((m) => c.etcd?.healthy.includes(m.id) ?? false);

/**
 * A quorum of the initial cluster answers and one of them leads: the cluster exists, the rest join
 * as they start. (A member answers its status call before any leader is elected.)
 */
export const startQuorum = (c: BootstrapView): boolean =>
  c.start != null &&
  !c.etcdStale &&
  c.etcd !== null &&
  startedHealthy(c).some((m) => m.id === c.etcd?.leader) &&
  startedHealthy(c).length >= quorum(c.start.members.length);

/** Planned members not (yet) answering healthy, by name. */
export const notStarted = (c: BootstrapView): string[] => {
  const up = new Set(startedHealthy(c).map((m) => m.name));
  return (c.start?.members ?? []).map((m) => m.name).filter((n) => !up.has(n));
};
