import { ERR } from './error-codes.ts';
/**
 * Pure rules the machines decide by: names, peer URLs, quorum arithmetic, which member to
 * remove. No I/O, no clock: everything arrives as arguments.
 */
import type { ClusterObjectRef, EtcdMemberInfo, EtcdObservation, MemberObservation } from './types.ts';

/** What a peer URL is made of: the cluster's namespace and name, and whether its peers use TLS. */
export type PeerRef = Pick<ClusterObjectRef, 'namespace' | 'name' | 'peerTLS'>;

/** A member's name: the cluster's, then an ordinal that is never reused. */
export const memberName = (cluster: string, ordinal: number): string => `${cluster}-${ordinal}`;

/** Longest EtcdSnapshot name (its Job, `<name>-snapshot`, must stay a 63-character label). */
const MAX_SNAPSHOT_NAME = 54;

/**
 * The EtcdSnapshot a roll to `version` takes first: `<cluster>-pre-v3-6-16`. A cluster name too
 * long for that is cut and a hash of the whole name added, so two clusters never share it.
 */
export function preUpgradeSnapshotName(cluster: string, version: string): string {
  const suffix = `-pre-v${version.replaceAll('.', '-')}`;
  if (cluster.length + suffix.length <= MAX_SNAPSHOT_NAME) return `${cluster}${suffix}`;
  let hash = 0x811c9dc5; // FNV-1a, 32 bits: stable across processes and versions
  for (const ch of cluster) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  const tag = `-${hash.toString(36).slice(0, 6)}`;
  return `${cluster.slice(0, MAX_SNAPSHOT_NAME - suffix.length - tag.length).replace(/-+$/, '')}${tag}${suffix}`;
}

/**
 * A member's peer URL: its Pod's DNS name under the cluster's headless Service, https when the
 * cluster's peers use TLS. It names the member in etcd's member list, so every comparison of
 * peer URLs goes through here with the same cluster ref.
 */
export const peerURL = (cluster: PeerRef, member: string): string =>
  `${cluster.peerTLS ? 'https' : 'http'}://${member}.${cluster.name}.${cluster.namespace}.svc:2380`;

/** How many voters a cluster of `voters` needs to make progress. */
export const quorum = (voters: number): number => Math.floor(voters / 2) + 1;

/**
 * The minAvailable of the PodDisruptionBudget over the Pods of `voters` members: all but one
 * from three up (one eviction at a time, as the operator heals one member at a time), all of
 * them below three (one or two voters have no member to spare for quorum).
 */
export const budgetMinAvailable = (voters: number): number => (voters >= 3 ? voters - 1 : voters);

/** Delay before the next try after `attempts` failed ones: 1s, 2s, 4s... up to 30s. */
export const backoff = (attempts: number): number => Math.min(1000 * 2 ** Math.max(0, attempts - 1), 30_000);

/**
 * Refusals by which etcd says "not yet" rather than "no": it holds the next membership change
 * for about 5 s after the last one, and a learner is promoted only once in sync. They are
 * retried every 500 ms for their first 20 tries (10 s, twice etcd's hold), then with back-off.
 */
export const HOLD_CODES = [ERR.ETCD_UNHEALTHY, ERR.LEARNER_NOT_IN_SYNC, ERR.CERTIFICATES_NOT_READY] as const;
/** One of HOLD_CODES. */
export type HoldCode = (typeof HOLD_CODES)[number];
const isHold = (code: string | undefined): code is HoldCode => (HOLD_CODES as readonly string[]).includes(code ?? '');
const HOLD_RETRY_MS = 500;
const HOLD_TRIES = 20;

/** Delay before the next try after `attempts` failed ones, the last with `code`. */
export function retryDelay(attempts: number, code: string | undefined): number {
  const held = isHold(code);
  if (held && attempts <= HOLD_TRIES) return HOLD_RETRY_MS;
  return backoff(Math.max(1, attempts - (held ? HOLD_TRIES : 0)));
}

/** A step's failures as a machine keeps them (StepBookkeeping). */
export interface StepFailures {
  readonly attempts: number;
  readonly lastError: { readonly code: string } | null;
}

/**
 * The "not yet" a step waits out when its last failure is an expected wait, not trouble: every
 * promotion in a healthy bootstrap or scale-up meets one, asked fast. Still refused after the
 * fast tries, or any other code from the first try (unreachable, refused request): trouble.
 */
export const expectedWait = (f: StepFailures): HoldCode | null =>
  f.lastError !== null && isHold(f.lastError.code) && f.attempts <= HOLD_TRIES ? f.lastError.code : null;

/** Whether the step's last try failed in a way a user should look at (a Warning Event). */
export const troubled = (f: StepFailures): boolean => f.lastError !== null && expectedWait(f) === null;

/** An effect's failure that trying again cannot help (the request itself is invalid). */
export const permanentFailure = (event: object): boolean =>
  'error' in event &&
  typeof event.error === 'object' &&
  event.error !== null &&
  (event.error as { retryable?: boolean }).retryable === false;

/** The etcd member that belongs to this EtcdMember, found by peer URL. */
export function etcdMemberFor(
  cluster: PeerRef,
  etcd: EtcdObservation | null,
  member: string,
): EtcdMemberInfo | undefined {
  const url = peerURL(cluster, member);
  return etcd?.members.find((m) => m.peerURL === url);
}

/** Voting members etcd reports, counting only those that still have a live EtcdMember. */
export function voters(
  cluster: PeerRef,
  members: readonly MemberObservation[],
  etcd: EtcdObservation | null,
): EtcdMemberInfo[] {
  const urls = new Set(members.filter((m) => !m.deleting).map((m) => peerURL(cluster, m.name)));
  return (etcd?.members ?? []).filter((m) => !m.learner && urls.has(m.peerURL));
}

/** etcd members no EtcdMember accounts for (a crash left them, or someone added them by hand). */
export function orphans(
  cluster: PeerRef,
  members: readonly MemberObservation[],
  etcd: EtcdObservation | null,
  joining: string | null,
): EtcdMemberInfo[] {
  const urls = new Set(members.map((m) => peerURL(cluster, m.name)));
  if (joining) urls.add(peerURL(cluster, joining));
  return (etcd?.members ?? []).filter((m) => !urls.has(m.peerURL));
}

/** Whether removing `victim` from etcd keeps a healthy quorum among the voters that remain. */
export function canRemove(etcd: EtcdObservation | null, victim: EtcdMemberInfo | undefined): boolean {
  if (!etcd) return false;
  if (!victim || victim.learner) return true;
  const remaining = etcd.members.filter((m) => !m.learner && m.id !== victim.id);
  const healthy = remaining.filter((m) => etcd.healthy.includes(m.id)).length;
  return remaining.length > 0 && healthy >= quorum(remaining.length);
}

/**
 * The member to remove when scaling down: an unhealthy one first (it serves nobody), then
 * the newest. Members already leaving are not candidates.
 */
export function pickVictim(
  cluster: PeerRef,
  members: readonly MemberObservation[],
  etcd: EtcdObservation | null,
): string | undefined {
  const candidates = members.filter((m) => !m.deleting && !m.dormant);
  const healthy = (m: MemberObservation): boolean => {
    const info = etcdMemberFor(cluster, etcd, m.name);
    return info !== undefined && (etcd?.healthy.includes(info.id) ?? false);
  };
  const sorted = [...candidates].sort((a, b) => Number(healthy(a)) - Number(healthy(b)) || b.ordinal - a.ordinal);
  return sorted[0]?.name;
}

/** The `--initial-cluster` of a seed: just itself. */
export const seedInitialCluster = (cluster: PeerRef, member: string): string => `${member}=${peerURL(cluster, member)}`;

/**
 * The voter leadership goes to when the member `fromID` is taken down (a rolling upgrade, a
 * defragmentation): a healthy voter other than it, the first `prefer` accepts (one already done,
 * so it will not be taken down again in the same run) or else the first. Undefined when none.
 */
export function successor(
  etcd: EtcdObservation | null | undefined,
  fromID: string,
  prefer: (m: EtcdMemberInfo) => boolean = () => false,
): EtcdMemberInfo | undefined {
  const others = (etcd?.members ?? []).filter((m) => !m.learner && m.id !== fromID && etcd?.healthy.includes(m.id));
  return others.find(prefer) ?? others[0];
}

/** Whether `id` leads and another healthy voter could take over: leadership is moved off it first. */
export const leadsWithSuccessor = (etcd: EtcdObservation | null | undefined, id: string | undefined): boolean =>
  id !== undefined && etcd?.leader === id && successor(etcd, id) !== undefined;

/** How far a restore moves revisions on: past any revision a watcher of the old cluster saw. */
export const BUMP_REVISION = 1_000_000_000;
