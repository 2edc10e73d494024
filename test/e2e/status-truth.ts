/**
 * Whether an EtcdCluster's Available and Degraded say what etcd and the member Pods say, judged
 * each time an e2e test reads the cluster. Pure: the reader (etcd-cluster.ts) reads the status
 * first, then the world, and hands both here with the times it read them.
 *
 * - Available=True claims a linearizable member list answers and a quorum of etcd's voters
 *   answers its own status call.
 * - Degraded=False claims every voter's Pod is Ready and no member's Pod crash-loops (not Ready
 *   after two restarts or more), and that every voter has a Pod.
 *
 * A claim is false only when what contradicts it had lasted longer than the manager is given to
 * notice at the moment the status was read: the 30 s grace the product documents for Degraded
 * (UNWELL_GRACE_MS) and the manager's probe for Available, each with some slack, counted from the
 * later of when the contradiction began and when the running manager started (a status written
 * by a manager that is gone is stale, not false; with no manager running nothing is judged).
 * When it began is the world's own time where it has one (a Pod's Ready transition), else the
 * first read that showed it, kept while every later read shows it.
 */
import type { EtcdCluster } from '../../api/v1alpha1/index.ts';
import { UNWELL_GRACE_MS } from '../../manager/status-degraded.ts';
import { quorum } from '../../machines/policy.ts';
import { StopWaiting } from '../../localcluster/until.ts';

/** Slack over the documented grace: a probe's call deadline (5 s), the work queue, a status write. */
export const SLACK_MS = 10_000;
/** How long Degraded=False may stand against an unready voter or a crash loop: the product's grace and slack. */
export const DEGRADED_ALLOWANCE_MS = UNWELL_GRACE_MS + SLACK_MS;
/**
 * How long Available=True may stand against etcd: a lost quorum shows in the Pods' readiness
 * within 3 s and works the cluster at once; a cluster at rest is probed every 15 s at first.
 */
export const AVAILABLE_ALLOWANCE_MS = 15_000 + SLACK_MS;

/** One member Pod as the test saw it. */
export interface PodSeen {
  readonly name: string;
  readonly uid: string;
  readonly ready: boolean;
  /** When the Pod's Ready condition last changed (ms), or its creation when it has none yet. */
  readonly readySince: number;
  /** Restarts of the etcd container. */
  readonly restarts: number;
  /** The etcd container's waiting reason (CrashLoopBackOff...), or its last exit, for the report. */
  readonly note: string;
}

/** What etcd answered the test. */
export type EtcdSeen =
  | {
      readonly answered: true;
      /** Voters as the linearizable member list names them: etcd ID and member (Pod) name from the peer URL. */
      readonly voters: readonly { readonly id: string; readonly name: string }[];
      /** IDs of the voters that answered their own status call with their own ID. */
      readonly healthy: readonly string[];
    }
  | { readonly answered: false; readonly error: string };

/** The world read after the status. */
export interface WorldSeen {
  /** When the world was read (ms): after the status was. */
  readonly at: number;
  readonly etcd: EtcdSeen;
  /** The cluster's member Pods that are not being deleted. */
  readonly pods: readonly PodSeen[];
  /** Voters to use when etcd did not answer: the status's own (status.members' role voter). */
  readonly votersByStatus: readonly string[];
}

/** One contradiction seen, and since when. */
interface Contradiction {
  readonly key: string;
  readonly claim: 'Available' | 'Degraded';
  readonly since: number;
  readonly what: string;
}

/** What the judge remembers of one cluster between reads. */
export interface TruthMemory {
  /** Since when each contradiction with no world time of its own was seen, by key. */
  readonly since: Map<string, number>;
  /** The contradictions already told (within their allowance), by key. */
  readonly told: Set<string>;
}

/** A judge's memory of a cluster not read yet. */
export const newMemory = (): TruthMemory => ({ since: new Map(), told: new Set() });

/** A claim of the status that etcd or the Pods contradict past the allowance. */
export class UntrueStatus extends StopWaiting {
  override readonly name = 'UntrueStatus';
  readonly code = 'ERR_UNTRUE_STATUS';
}

/** What judge() needs besides the status and the world. */
export interface JudgeInput {
  readonly cluster: EtcdCluster;
  /** When the status was read (ms): before the world. */
  readonly statusAt: number;
  readonly world: WorldSeen;
  /** Since when the manager writing this status runs (0: always, as one installed in the cluster); null when none runs. */
  readonly managerSince: number | null;
  readonly memory: TruthMemory;
  /** Told once per contradiction seen within its allowance (a test's log shows the edges it passed). */
  readonly tell?: (line: string) => void;
}

const condition = (c: EtcdCluster, type: string) => c.status?.conditions?.find((x) => x.type === type);
const iso = (ms: number): string => new Date(ms).toISOString();

/** The contradictions of the claims the status makes, each with when it began. */
function contradictions(c: EtcdCluster, world: WorldSeen, memory: TruthMemory): Contradiction[] {
  const found: Contradiction[] = [];
  const seen = new Set<string>();
  // No world time of its own: since the first read that showed it, while every read since did.
  const remembered = (key: string, claim: Contradiction['claim'], what: string): void => {
    seen.add(key);
    const since = memory.since.get(key) ?? world.at;
    memory.since.set(key, since);
    found.push({ key, claim, since, what });
  };
  const { etcd, pods } = world;
  if (condition(c, 'Available')?.status === 'True') {
    if (!etcd.answered)
      remembered('available:list', 'Available', `no member answered a linearizable member list: ${etcd.error}`);
    else {
      const healthy = etcd.voters.filter((v) => etcd.healthy.includes(v.id)).length;
      if (healthy < quorum(etcd.voters.length))
        remembered(
          'available:quorum',
          'Available',
          `${healthy} of ${etcd.voters.length} voters answered their status call, a quorum is ${quorum(etcd.voters.length)}`,
        );
    }
  }
  if (condition(c, 'Degraded')?.status === 'False') {
    const voters = etcd.answered ? etcd.voters.map((v) => v.name) : world.votersByStatus;
    for (const name of voters) {
      const pod = pods.find((p) => p.name === name);
      if (!pod) remembered(`pod:${name}`, 'Degraded', `voter ${name} has no Pod`);
      else if (!pod.ready)
        found.push({
          key: `ready:${pod.uid}`,
          claim: 'Degraded',
          since: pod.readySince,
          what: `voter ${name}'s Pod not Ready since ${iso(pod.readySince)} (${pod.restarts} restarts${pod.note ? `, ${pod.note}` : ''})`,
        });
    }
    for (const pod of pods)
      if (!pod.ready && pod.restarts >= 2 && !voters.includes(pod.name))
        found.push({
          key: `loop:${pod.uid}`,
          claim: 'Degraded',
          since: pod.readySince,
          what: `${pod.name}'s etcd restarted ${pod.restarts} times, not Ready since ${iso(pod.readySince)}${pod.note ? ` (${pod.note})` : ''}`,
        });
  }
  // A contradiction this read does not show starts over when it shows again.
  for (const key of [...memory.since.keys()]) if (!seen.has(key)) memory.since.delete(key);
  return found;
}

/**
 * Throws UntrueStatus when Available=True or Degraded=False stood, when the status was read,
 * against what etcd or the Pods showed for longer than the manager is given; else returns.
 */
export function judge(o: JudgeInput): void {
  if (o.world.at < o.statusAt) throw new Error('the world must be read after the status');
  const found = contradictions(o.cluster, o.world, o.memory);
  if (o.managerSince === null) return;
  const managerSince = o.managerSince;
  const allowance = (x: Contradiction) => (x.claim === 'Available' ? AVAILABLE_ALLOWANCE_MS : DEGRADED_ALLOWANCE_MS);
  const overdue = found.filter((x) => o.statusAt - Math.max(x.since, managerSince) > allowance(x));
  for (const x of found)
    if (!overdue.includes(x) && !o.memory.told.has(x.key)) {
      o.memory.told.add(x.key);
      o.tell?.(
        `status truth: ${x.claim} stands while ${x.what}, seen since ${iso(x.since)}: within ${allowance(x) / 1000} s`,
      );
    }
  if (overdue.length === 0) return;
  const { namespace, name } = o.cluster.metadata;
  const lines = overdue.map((x) => {
    const claimed = condition(o.cluster, x.claim);
    const said = `${x.claim}=${claimed?.status} ${claimed?.reason}: ${claimed?.message}`;
    return `${said} (read ${iso(o.statusAt)}), but ${x.what}, seen since ${iso(x.since)}, over ${allowance(x) / 1000} s`;
  });
  throw new UntrueStatus(`EtcdCluster ${namespace}/${name} says what is not so:\n  ${lines.join('\n  ')}`);
}
