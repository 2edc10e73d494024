/**
 * The roll's steps by name: its guards, what it writes into the context, and the parameters of
 * its intents (createUpgradeSnapshot, moveLeader, setMemberVersion). One member at a time; a
 * member is taken down only with every other voter healthy and in sync and no learner joining.
 */
import { etcdFresh, liveVoters, retargeted, type ClusterContext } from '../../cluster-decide.ts';
import type { Update } from '../../kit.ts';
import { etcdMemberFor, leadsWithSuccessor, preUpgradeSnapshotName, successor } from '../../policy.ts';
import type {
  ClusterEvent,
  CreateUpgradeSnapshotParams,
  DowngradeParams,
  FlushRaftLogParams,
  MoveLeaderParams,
  SetMemberVersionParams,
} from '../../types.ts';
import {
  DEFAULT_SNAPSHOT_COUNT,
  downgradeCancelNeeded,
  downgradeNeeded,
  logFlushNeeded,
  minorName,
  outdatedMembers,
  preUpgradeSnapshot,
  trustOutdated,
  upgradee,
} from './rules.ts';
import { MEMBER_STATE } from '../../member-state.ts';

type Ctx = { context: ClusterContext };

/** Guards of the roll, by name. */
export const rollGuards = {
  upgradeeGone: ({ context }: Ctx) => upgradee(context) === undefined,
  // A roll takes its snapshot once, before its first member, unless told to go without.
  // Only a new version takes it: a roll onto new CAs changes no data.
  upgradeSnapshotNeeded: ({ context: c }: Ctx) =>
    c.upgradeSnapshotWanted === true &&
    outdatedMembers(c).some((m) => m.version !== c.target?.version) &&
    c.preUpgradeDone !== c.target?.version &&
    preUpgradeSnapshot(c)?.phase !== 'Succeeded',
  upgradeSnapshotUnwanted: ({ context: c }: Ctx) => c.upgradeSnapshotWanted !== true,
  upgradeSnapshotListed: ({ context: c }: Ctx) => preUpgradeSnapshot(c) !== undefined,
  upgradeSnapshotSucceeded: ({ context: c }: Ctx) => preUpgradeSnapshot(c)?.phase === 'Succeeded',
  // The failed snapshot was deleted: a new one is taken (the way to try again).
  upgradeSnapshotRetry: ({ context: c }: Ctx) =>
    c.preUpgradeFailed === c.target?.version && preUpgradeSnapshot(c) === undefined,
  // A failed snapshot holds the roll until the spec changes (another version, or back).
  upgradeSnapshotFailedRetargeted: ({ context: c }: Ctx) => preUpgradeSnapshot(c)?.phase === 'Failed' && retargeted(c),
  // A member is taken down only when every other voter answers, none trails the leader, and no
  // learner joins. Its own health does not count: one that does not run (an upgrade it could not
  // start, being undone) loses nothing by a restart.
  readyToRestart: ({ context: c }: Ctx) => {
    const others = liveVoters(c).filter((v) => v.id !== c.upgrade?.memberID);
    return (
      etcdFresh(c) &&
      c.etcd !== null &&
      others.every((v) => c.etcd?.healthy.includes(v.id) && !c.etcd.behind?.includes(v.id)) &&
      !c.etcd.members.some((m) => m.learner)
    );
  },
  upgradeeLeads: ({ context: c }: Ctx) => leadsWithSuccessor(c.etcd, c.upgrade?.memberID),
  logFlushNeeded: ({ context: c }: Ctx) => logFlushNeeded(c),
  downgradeNeeded: ({ context: c }: Ctx) => downgradeNeeded(c),
  downgradeCancelNeeded: ({ context: c }: Ctx) => downgradeCancelNeeded(c),
  // A downgrade not come down (refused, the answer says why; or a member down) gives way to a new spec.
  downgradeRetargeted: ({ context: c }: Ctx) => retargeted(c),
  leaderMoved: ({ context: c }: Ctx) => etcdFresh(c) && c.etcd?.leader != null && c.etcd.leader !== c.upgrade?.memberID,
  // Back on the new version and CAs: its Pod started with them and ready, etcd answering from
  // it with that version, in sync.
  upgradeeUpgraded: ({ context: c }: Ctx) => {
    const id = c.upgrade?.memberID ?? '';
    const m = upgradee(c);
    return (
      m?.state === MEMBER_STATE.voter &&
      m.version === c.target?.version &&
      (c.target?.trust === undefined || (m.trust === c.target.trust && m.podTrust === c.target.trust)) &&
      c.etcd !== null &&
      c.etcd.healthy.includes(id) &&
      c.etcd.versions?.[id] === m.version &&
      !(c.etcd.behind ?? []).includes(id)
    );
  },
  // A member that does not come back past the deadline holds the roll; a new spec (a fix, or
  // the version it left) is taken then instead of waiting for ever.
  stuckAndRetargeted: ({ context: c }: Ctx) =>
    retargeted(c) && c.now - c.stepStartedAt >= c.progressDeadlineSeconds * 1000,
};

type Of<T extends ClusterEvent['type']> = Extract<ClusterEvent, { type: T }>;

/** Context updates of the roll, by name. */
export const rollUpdates = {
  observeUpgradeSnapshots: (c, e) => {
    const { snapshots } = e as Of<'k8s.upgradeSnapshots.listed'>;
    const mine = snapshots.find((s) => s.version === c.target?.version);
    return {
      preUpgrade: snapshots,
      ...(mine?.phase === 'Failed' ? { preUpgradeFailed: mine.version } : {}),
    };
  },
  markPreUpgradeDone: (c) => ({ preUpgradeDone: c.target?.version ?? null }),
  markLogFlushed: (c) => ({ logFlushed: c.target?.version ?? null }),
  markDowngradeEnabled: (c) => ({ downgradeTo: c.target?.version ? minorName(c.target.version) : null }),
  markDowngradeCancelled: () => ({ downgradeTo: null }),
  clearPreUpgradeFailure: () => ({ preUpgradeFailed: null }),
  // The next member of a roll, and its place in it: `2 of 3` counts the members already done.
  chooseUpgradee: (c) => {
    const outdated = outdatedMembers(c);
    const next = outdated[0];
    const total = c.members.filter((m) => !m.deleting).length;
    return {
      upgrade: next
        ? {
            member: next.name,
            memberID: etcdMemberFor(c.cluster, c.etcd, next.name)?.id ?? '',
            from: next.version ?? '',
            ...(trustOutdated(c, next) ? { newTrust: true } : {}),
            position: total - outdated.length + 1,
            total,
          }
        : null,
    };
  },
  finishUpgrade: () => ({ upgrade: null, etcdStale: true }),
} satisfies Record<string, Update<ClusterContext, ClusterEvent>>;

/** createUpgradeSnapshot for the roll to the target version. */
export const upgradeSnapshotParams = ({ context: c }: Ctx): CreateUpgradeSnapshotParams => ({
  cluster: c.cluster.name,
  name: preUpgradeSnapshotName(c.cluster.name, c.target?.version ?? ''),
  version: c.target?.version ?? '',
});

/** flushRaftLog before the first member restarts on 3.7: past every member's --snapshot-count. */
export const flushRaftLogParams = ({ context: c }: Ctx): FlushRaftLogParams => ({
  entries: (c.snapshotCount ?? DEFAULT_SNAPSHOT_COUNT) + 1,
  version: c.target?.version ?? '',
});

/** enableDowngrade or cancelDowngrade for the roll to the target version. */
export const downgradeParams = ({ context: c }: Ctx): DowngradeParams => ({ version: c.target?.version ?? '' });

/** cancelDowngrade of a downgrade given up for a new spec: for the version the spec asks now. */
export const abandonParams = ({ context: c }: Ctx): DowngradeParams => ({
  version: c.spec?.version ?? c.target?.version ?? '',
});

/** setMemberVersion for the member being upgraded. */
export const upgradeParams = ({ context: c }: Ctx): SetMemberVersionParams => ({
  member: c.upgrade?.member ?? '',
  version: c.target?.version ?? '',
  ...(c.target?.trust !== undefined ? { trust: c.target.trust } : {}),
});

/**
 * moveLeader off the member being upgraded, to a healthy voter: one already on the target
 * version when there is one (it will not restart again in this roll), else the first.
 */
export const moveLeaderParams = ({ context: c }: Ctx): MoveLeaderParams => {
  const u = c.upgrade;
  const to = successor(c.etcd, u?.memberID ?? '', (m) => c.etcd?.versions?.[m.id] === c.target?.version);
  return { member: u?.member ?? '', memberID: u?.memberID ?? '', toID: to?.id ?? '' };
};
