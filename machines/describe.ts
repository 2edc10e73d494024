/**
 * What a user reads about a machine's state: the step (a CamelCase reason for the Progressing
 * condition and the Step printer column) and a message saying what it does and waits for.
 */
import { clusterMachine } from './cluster.ts';
import type { ClusterContext } from './cluster-decide.ts';
import { liveVoters, wantedBudget } from './cluster-decide.ts';
import { retarget } from './cluster/concern.ts';
import { concernMessage, concernStep } from './cluster/concerns.ts';
import { stepOf } from './cluster/ids.ts';
import { startMessage } from './cluster/bootstrap/index.ts';
import { maintenanceNote } from './cluster/maintenance/index.ts';
import { recoveryHint } from './cluster/recovery/index.ts';
import { older } from './cluster/roll/index.ts';
import { memberTrouble, type MemberContext } from './member-decide.ts';
import { MEMBER_STATE, shownState, type MemberState, type VersionMove } from './member-state.ts';
import { expectedWait, peerURL, type HoldCode, type StepFailures } from './policy.ts';
import { pathHasTag, TAG } from './tags.ts';

/** A user-facing description of a machine state. */
export interface Described {
  readonly step: string;
  readonly message: string;
}

const camel = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** What each of etcd's "not yet" answers waits for, said instead of a failure (policy.ts expectedWait). */
const WAITS_FOR: Readonly<Record<HoldCode, string>> = {
  ERR_ETCD_UNHEALTHY:
    'waiting for etcd to allow the next membership change, which it holds until its members have been connected for 5 s',
  ERR_LEARNER_NOT_IN_SYNC: "waiting for the learner to catch up with the leader's log: etcd promotes it only then",
  ERR_CERTIFICATES_NOT_READY: 'waiting for cert-manager to issue them (their Ready condition)',
};

/** What a step whose last try failed waits for: the end of etcd's hold, or the retry of a failure. */
function retrying(c: StepFailures & { lastError: { code: string; message: string } | null }): string {
  if (!c.lastError) return '';
  const wait = expectedWait(c);
  if (wait) return `; ${WAITS_FOR[wait]}`;
  return `; the last try failed (${c.lastError.code}: ${c.lastError.message}) and is retried with back-off`;
}

function joinMessage(sub: string, c: ClusterContext): string {
  const m = c.joining?.member ?? 'the new member';
  if (sub.startsWith('addingLearner')) return `adding ${m} to etcd as a learner`;
  if (sub.startsWith('creatingMember'))
    return `creating EtcdMember ${m}${c.joining?.memberID ? ` (etcd member ${c.joining.memberID})` : ''}`;
  if (sub.startsWith('awaitingStart')) return `waiting for learner ${m} to start etcd`;
  const progress = c.joining?.memberID ? c.etcd?.learners?.[c.joining.memberID] : undefined;
  const where = progress ? ` (applied index ${progress.applied} of the leader's ${progress.leader})` : '';
  return `promoting learner ${m} once it is in sync with the leader${where}`;
}

/** What the seeding step does: Services, the check of a snapshot to restore, the seed. */
function seedingMessage(sub: string, c: ClusterContext): string {
  const seed = c.joining?.member ?? '';
  const from = c.restore ? ` from the snapshot${c.restore.location ? ` at ${c.restore.location}` : ''}` : '';
  if (sub.includes('creatingServices'))
    return 'creating the headless Service that gives members their DNS names, and the client Service';
  if (sub.includes('creatingCertificates'))
    return `creating the cert-manager Certificates of spec.tls (${c.cluster.name}-<client|peer|operator>-tls)`;
  if (sub.includes('awaitingCertificates'))
    return `checking that the cert-manager Certificates of spec.tls (${c.cluster.name}-<client|peer|operator>-tls) are Ready before any member is built on their Secrets`;
  if (sub.includes('holdingRestore'))
    return `holding EtcdSnapshot ${c.restore?.snapshot ?? ''} with this cluster's finalizer, so that deleting it keeps its stored file until the seed runs from it`;
  if (sub.includes('releasingRestore'))
    return `letting go of EtcdSnapshot ${c.holding ?? c.restore?.snapshot ?? ''}: the seed no longer needs it (a deletion of it waiting goes on)`;
  if (sub.includes('verifyingRestore'))
    return `checking the snapshot${c.restore?.location ? ` at ${c.restore.location}` : ''} before any member starts: a Job reads it whole and checks its SHA-256 and etcd's own hash`;
  if (sub.includes('awaitingSeed'))
    return c.restore
      ? `waiting for the seed member ${seed} to restore${from} and start`
      : `waiting for the seed member ${seed} to start a new etcd cluster`;
  return `creating the seed member ${seed}${from}`;
}

/** What the budget step sets: how many member Pods an eviction (a node drain) must leave running. */
function budgetMessage(c: ClusterContext, voters: number): string {
  const name = `PodDisruptionBudget ${c.cluster.name}`;
  const min = wantedBudget(c);
  if (min === null) return `deleting ${name}: a cluster scaled to zero has no Pods to protect`;
  const of = Math.max(voters, c.target?.replicas ?? 0);
  return min < of
    ? `setting ${name} to minAvailable ${min} of ${of} members: evictions (a node drain) stop one member at a time`
    : `setting ${name} to minAvailable ${min}: with ${of} member${of === 1 ? '' : 's'}, no eviction may stop one without losing quorum`;
}

/** Why the member leaving is replaced, as its EtcdMember's state says. */
function lostWhy(c: ClusterContext): string {
  const state = c.members.find((m) => m.name === c.leaving?.member)?.state;
  if (state === MEMBER_STATE.nodeLost) return 'whose node is down or gone';
  return state === MEMBER_STATE.replacing ? 'whose data is gone' : 'whose data is gone or whose node is down';
}

/** `; down: demo-1, demo-2` naming the members that do not answer, by EtcdMember name. */
function down(c: ClusterContext, names: readonly string[]): string {
  const named = names.filter((n) => n !== '');
  return named.length > 0 ? `; not answering: ${named.join(', ')}` : '';
}

/**
 * `; demo-2 has not started: ...` for each voter that does not answer and never ran (its member
 * machine is still `bootstrapping`): a member of a new cluster's initial cluster whose Pod has
 * not run yet. etcd lists it by name from the start; it waits, and joins when it runs.
 */
function unstarted(c: ClusterContext): string {
  const down = new Set(liveVoters(c).flatMap((v) => (c.etcd?.healthy.includes(v.id) ? [] : [v.peerURL])));
  return c.members
    .filter((m) => m.state === MEMBER_STATE.bootstrapping && !m.deleting && down.has(peerURL(c.cluster, m.name)))
    .map((m) => `; ${m.name} has not started: a member of the initial cluster, it joins as soon as its Pod runs`)
    .join('');
}

/** `; leader NAME` when etcd names a leader among the members it lists. */
const leaderOf = (c: ClusterContext): string => {
  const leader = c.etcd?.members.find((m) => m.id === c.etcd?.leader);
  return leader?.name ? `; leader ${leader.name}` : '';
};

/** The step and message of a cluster machine state (its dotted path) and context. */
export function describeCluster(path: string, c: ClusterContext): Described {
  const [top = 'pending'] = path.split('.');
  const message = concernMessage(path, c) ?? coordinatorMessage(path, c);
  const resting = pathHasTag(clusterMachine, path, TAG.resting);
  return {
    step: concernStep(path, c) ?? camel(top),
    message: `${message}${stuckMembers(c)}${resting ? '' : retrying(c)}`,
  };
}

/** What the coordinator's own steps (membership, bootstrap, rest) say. */
function coordinatorMessage(path: string, c: ClusterContext): string {
  const rest = path.split('.').slice(1);
  const sub = rest.join('.');
  const target = c.target?.replicas ?? 0;
  const live = c.etcd ? liveVoters(c) : [];
  const voters = live.length;
  const healthy = live.filter((v) => c.etcd?.healthy.includes(v.id)).length;
  const leaving = c.leaving?.member ?? 'a member';
  let message: string;
  // Cases the compiler checks against the machine's steps (a step it lacks does not compile).
  switch (stepOf(path)) {
    case 'pending':
      message = c.spec === null ? 'waiting for the EtcdCluster spec' : 'waiting for the list of its EtcdMembers';
      break;
    case 'bootstrapping':
      message = sub.startsWith('seeding')
        ? seedingMessage(sub, c)
        : sub.startsWith('starting')
          ? startMessage(rest.slice(1).join('.'), c)
          : `${joinMessage(rest.slice(1).join('.'), c)} (${voters} of ${target} voters)`;
      break;
    case 'scalingUp':
      message = `${joinMessage(rest.slice(1).join('.'), c)} (${voters} of ${target} voters)`;
      break;
    case 'replacing':
      message =
        rest[0] === 'joining'
          ? `replacing a member whose data was lost or whose node is down: ${joinMessage(rest.slice(2).join('.'), c)}`
          : `removing ${leaving}, ${lostWhy(c)}, before a new member joins`;
      break;
    case 'scalingDown':
      message = sub.includes('awaitingRemoval')
        ? `waiting for ${leaving} to leave etcd and go (${voters} voters, ${target} wanted)`
        : `removing ${leaving} (${voters} voters, ${target} wanted)`;
      break;
    case 'removingOrphan':
      message = `removing etcd member ${c.orphan?.id ?? ''} (${c.orphan?.peerURL ?? ''}), which no EtcdMember accounts for`;
      break;
    case 'updatingBudget':
      message = budgetMessage(c, voters);
      break;
    case 'enablingAuth':
      message =
        "enabling etcd authentication: adding the user root without a password (the operator is root by its client certificate's common name) with the role root, then turning auth on";
      break;
    case 'parking':
      message = "scaling to zero: stopping every member's Pod; volumes and member IDs are kept";
      break;
    case 'dormant':
      message = `scaled to zero: no Pods run; ${c.members.length} members keep their volumes and IDs`;
      break;
    case 'waking':
      message = `waking ${c.members.length} dormant members with their data and IDs`;
      break;
    case 'observing':
      message = `waiting for etcd's member list after the last change${retarget(c)}`;
      break;
    case 'steady': {
      // Steady needs a healthy quorum, not every voter: say when one is down.
      const health =
        healthy < voters
          ? `${voters} voters, ${healthy} healthy: a quorum`
          : voters === 1
            ? 'one voter, healthy'
            : `${voters} voters, all healthy`;
      message = `${health}${leaderOf(c)}${unstarted(c)}${maintenanceNote(c)}`;
      break;
    }
    case 'degraded':
      message =
        c.clusterID !== null && c.etcd && c.etcd.clusterID !== c.clusterID
          ? `etcd at the members' addresses reports cluster ${c.etcd.clusterID}, not ${c.clusterID}: nothing is changed until this is resolved`
          : c.etcdError
            ? `etcd does not answer: ${c.etcdError}${down(
                c,
                live.map((v) => v.name),
              )}`
            : `${healthy} of ${voters} voters healthy${down(
                c,
                live.filter((v) => !c.etcd?.healthy.includes(v.id)).map((v) => v.name),
              )}: waiting for a healthy quorum before any change${recoveryHint(c)}`;
      break;
    case 'deleting':
      message = 'the cluster is being deleted; its members go with it';
      break;
    case 'failed':
      message = c.lastError?.code?.startsWith('ERR_RESTORE')
        ? `the cluster is not started: ${c.lastError.message}; no member was created. Delete the EtcdCluster and create it again from a good snapshot`
        : failure(c, "the EtcdCluster's spec changes");
      break;
    default:
      message = path;
  }
  return message;
}

/** `; EtcdMember demo-0: <why its Pod does not run>` for each member whose Pod or claim is stuck. */
const stuckMembers = (c: ClusterContext): string =>
  c.members
    .filter((m) => (m.trouble || m.state === MEMBER_STATE.nodeLost) && !m.deleting)
    .map(
      (m) =>
        `; EtcdMember ${m.name}: ${m.trouble?.message ?? `its node is down or gone (nodeLost; kubectl describe etcdmember ${m.name} says which)`}`,
    )
    .join('');

/** A `failed` state's message: the error, and what makes the machine try again. */
const failure = (c: { lastError: { code: string; message: string } | null }, until: string): string =>
  `a step failed in a way trying again cannot fix${c.lastError ? ` (${c.lastError.code}: ${c.lastError.message})` : ''}; nothing more is done until ${until}`;

/** ` once with --force-new-cluster (recovery R)` or ` without --force-new-cluster` while a recovery restarts the member. */
const forceChange = (c: MemberContext): string => {
  if (!c.pod || (c.pod.forceNewCluster ?? null) === (c.forceNewCluster ?? null)) return '';
  return c.forceNewCluster
    ? ` once with --force-new-cluster (recovery ${c.forceNewCluster}): a cluster of one, its data kept`
    : ' without --force-new-cluster, so no later restart forces again';
};

/**
 * Where a restart onto its spec takes the member: down when the spec names an older version than
 * it ran or its Pod runs, up when a newer one, none when it names the version both run (the Pod is
 * made again for CAs to trust or --force-new-cluster).
 */
function versionMove(c: MemberContext): VersionMove {
  const to = c.version;
  const from = [c.ranVersion, c.pod?.version].filter((v) => v !== undefined);
  if (to === undefined || from.length === 0) return 'up';
  if (from.some((v) => older(to, v))) return 'down';
  return from.every((v) => v === to) ? 'none' : 'up';
}

/** What a restart onto its spec (a version, CAs to trust, --force-new-cluster) does now. */
const restartMessage = (sub: string, c: MemberContext): string =>
  `restarting${c.version ? ` on etcd ${c.version}` : ''}${c.ranVersion && c.ranVersion !== c.version ? ` (it ran ${c.ranVersion})` : ''}${c.trust !== undefined && c.pod && c.pod.trust !== c.trust ? ' to trust the CA certificates now in its Secrets' : ''}${forceChange(c)} with the same volume and member ID: ${
    sub === 'stoppingPod' || sub === 'awaitingGone'
      ? 'stopping the Pod'
      : sub === 'awaitingReady'
        ? 'waiting for the new Pod to be ready'
        : 'creating the new Pod'
  }`;

/** Why a member is nodeLost: its Pod evicted from a down node, or what ties its claim to a deleted one. */
function nodeLostWhy(c: MemberContext): string {
  if (c.pod?.evictedFromNode) return `its node ${c.pod.evictedFromNode} is down and Kubernetes evicts its Pod`;
  const node = c.pvcLostNode ?? '';
  return c.pvcBound === false
    ? `its claim is Pending, its volume to be made on node ${node} (the node chosen for its Pod), which no longer exists, so no Pod of it can run`
    : `its volume is pinned to node ${node}, which no longer exists, so no Pod of it can run`;
}

/** Member states in which what keeps a Pod from running is not news: none is meant to run. */
const UNTROUBLED: ReadonlySet<MemberState> = new Set([
  MEMBER_STATE.failed,
  MEMBER_STATE.removed,
  MEMBER_STATE.dormant,
  MEMBER_STATE.parking,
]);

/**
 * The step and message of a member machine state; `state` is what EtcdMember.status.state shows
 * (undefined for a path the machine does not have, as a journal's older one may be).
 */
export function describeMember(
  path: string,
  c: MemberContext,
): Described & { readonly state: MemberState | undefined } {
  const [top = 'pending', sub = ''] = path.split('.');
  const running = Boolean(c.pod && !c.pod.deleting && c.pod.phase === 'Running');
  const state = shownState(path, running, versionMove(c));
  const messages: Record<MemberState, string> = {
    pending: "waiting for the member's Pod and volume to be observed",
    deciding: 'deciding the next step',
    creatingVolume: "creating the member's PersistentVolumeClaim",
    bootstrapping:
      'starting etcd for the first time with a new cluster (--initial-cluster-state new): the seed, or one of the members a new cluster starts with at once',
    joiningLearner: 'starting etcd as a learner that joins the cluster',
    promoting: 'running as a learner, catching up with the leader before promotion',
    rechecking:
      'etcd restarted inside its Pod, where the data check does not run: a new Pod checks the volume before etcd starts',
    restarting: "etcd's Pod is gone or not ready: starting it again from the member's volume",
    notReady:
      'etcd runs in its Pod but does not report healthy (its readiness probe fails): it waits for a quorum of its cluster, or is still starting',
    upgrading: restartMessage(sub, c),
    downgrading: restartMessage(sub, c),
    reconfiguring: restartMessage(sub, c),
    voter: 'a voting member, running',
    parking: 'stopping the Pod for scale to zero; the volume stays',
    dormant: 'dormant: no Pod runs; the volume and member ID are kept',
    replacing: `its data is gone (${c.dataLost ?? 'unknown'}); the cluster replaces it with a new member`,
    nodeLost: `${nodeLostWhy(c)}; the cluster replaces it with a new member on a live node while a quorum remains`,
    removing:
      sub === 'forcingPod' || sub === 'clearing'
        ? `out of etcd; deleting its Pod on the lost node${c.pod?.evictedFromNode ? ` ${c.pod.evictedFromNode}` : ''} at once, as no kubelet will confirm it gone`
        : 'leaving etcd before its Pod and volume go',
    removed: 'removed from etcd',
    failed: failure(c, 'the EtcdMember or its EtcdCluster changes'),
  };
  // What keeps its Pod or claim from running, in Kubernetes' words, whatever the step waits for.
  const trouble = memberTrouble(c);
  const stuck = trouble && !(state && UNTROUBLED.has(state)) ? `; ${trouble.message}` : '';
  return {
    state,
    step: camel(state ?? top),
    message: `${state ? messages[state] : path}${stuck}${state === MEMBER_STATE.failed ? '' : retrying(c)}`,
  };
}
