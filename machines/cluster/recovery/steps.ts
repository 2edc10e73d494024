/**
 * The recovery's steps by name: its guards, what it writes into the context, and the parameters
 * of its intents (setDormant for the lost members, setForceNewCluster for the survivor, then
 * deleteMember for each lost one, one at a time).
 */
import type { ClusterEvent, MemberParams, SetDormantParams, SetForceNewClusterParams } from '../../types.ts';
import { recoveredMessage } from './describe.ts';
import {
  chosen,
  judgedWith,
  lostGone,
  lostListed,
  lostStopped,
  nextToDelete,
  recoveryPending,
  refusal,
  survivorForced,
  survivorPlain,
  type RecoveryContext,
  type RecoveryView,
} from './rules.ts';

type Ctx = { context: RecoveryView };

/** A request not judged yet, with the members listed, etcd's answer fresh and the cluster not going. */
const judgeable = (c: RecoveryView): boolean =>
  recoveryPending(c) && c.membersSeen && !c.deleting && !c.etcdStale && c.etcd !== null;

/** Guards of the recovery, by name. */
export const recoveryGuards = {
  recoveryRefused: ({ context: c }: Ctx) => refusal(c) !== null,
  // Judged from any step, on a fresh answer from etcd: one that would go ahead interrupts the
  // step (stuck anyway without a quorum); one refused is said at once and the step goes on.
  recoveryInterrupts: ({ context: c }: Ctx) => judgeable(c) && refusal(c) === null,
  recoveryRefusedNow: ({ context: c }: Ctx) => judgeable(c) && refusal(c) !== null,
  lostStopped: ({ context: c }: Ctx) => lostStopped(c),
  survivorForced: ({ context: c }: Ctx) => survivorForced(c),
  survivorPlain: ({ context: c }: Ctx) => survivorPlain(c),
  lostToDelete: ({ context: c }: Ctx) => nextToDelete(c) !== undefined,
  lostGone: ({ context: c }: Ctx) => lostGone(c),
};

type RecoveryUpdate = (
  c: RecoveryView & { readonly now: number },
  e: ClusterEvent,
) => Partial<RecoveryContext> & { readonly etcdStale?: boolean };

/** Context updates of the recovery, by name. */
export const recoveryUpdates = {
  // The request is refused: said once, with why, and not acted on again.
  refuseRecovery: (c) => ({
    recovered: { requestID: c.recoveryAsked?.requestID ?? '', result: 'refused', message: refusal(c) ?? '', at: c.now },
    judged: judgedWith(c),
  }),
  chooseSurvivor: (c) => ({ recovery: chosen(c), judged: judgedWith(c) }),
  chooseLostToDelete: (c) => (c.recovery ? { recovery: { ...c.recovery, deleting: nextToDelete(c) ?? null } } : {}),
  recordDeleted: (c) => {
    const r = c.recovery;
    return r?.deleting ? { recovery: { ...r, deleted: [...r.deleted, r.deleting], deleting: null } } : {};
  },
  finishRecovery: (c) => ({
    recovery: null,
    recovered: c.recovery
      ? { requestID: c.recovery.requestID, result: 'recovered', message: recoveredMessage(c.recovery), at: c.now }
      : null,
    etcdStale: true,
  }),
} satisfies Record<string, RecoveryUpdate>;

/** setDormant for every lost member still listed: their Pods stop, their volumes stay until they are deleted. */
export const stopLostParams = ({ context: c }: Ctx): SetDormantParams => ({ members: lostListed(c), dormant: true });

/** setForceNewCluster on the survivor: with the request's ID (the forced start), or null (plain again). */
export const forceParams =
  (on: boolean) =>
  ({ context: c }: Ctx): SetForceNewClusterParams => ({
    member: c.recovery?.survivor ?? '',
    requestID: on ? (c.recovery?.requestID ?? null) : null,
  });

/** deleteMember for the lost member chosen to go now. */
export const deleteLostParams = ({ context: c }: Ctx): MemberParams => ({ member: c.recovery?.deleting ?? '' });
