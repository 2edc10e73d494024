/**
 * The volume step by name: its guards, what it writes into the context, and the parameters of
 * growVolume (one claim patched at a time; rules.ts says which).
 */
import { ERR } from '../../error-codes.ts';
import { failureOf } from '../../kit.ts';
import type { GrowVolumeParams } from '../../types.ts';
import { growDone, nextClaim, type ClaimObservation, type VolumesContext, type VolumesView } from './rules.ts';

type Ctx = { context: VolumesView };

/** Guards of the volume step, by name. */
export const volumeGuards = {
  claimToPatch: ({ context: c }: Ctx) => nextClaim(c) !== undefined,
  volumesGrown: ({ context: c }: Ctx) => growDone(c),
  expansionNotAllowed: ({ event }: { event: object }) => failureOf(event)?.code === ERR.VOLUME_EXPANSION_NOT_ALLOWED,
};

type Update = (
  c: VolumesView,
  e: { readonly type: string; readonly at: number },
) => Partial<VolumesContext> & { retryAt?: null; attempts?: number; lastError?: null };

/** Context updates of the volume step, by name. */
export const volumeUpdates = {
  observeClaims: (_, e) => ({ claims: (e as unknown as { claims: readonly ClaimObservation[] }).claims }),
  // A run interrupted (another step came first) goes on with the claims it already asked, at the same size.
  beginGrow: (c) =>
    c.grow && c.grow.size.bytes === c.volumeSize?.bytes
      ? {}
      : { grow: c.volumeSize ? { size: c.volumeSize, patched: [], member: null } : null },
  chooseClaim: (c) => (c.grow ? { grow: { ...c.grow, member: nextClaim(c)?.member ?? null } } : {}),
  recordPatched: (c) => {
    const g = c.grow;
    if (!g?.member) return {};
    return { grow: { ...g, patched: [...g.patched, g.member], member: null } };
  },
  markGrowRefused: (c, e) => {
    const error = failureOf(e);
    const claim = (c.claims ?? []).find((k) => k.member === c.grow?.member);
    return {
      retryAt: null,
      attempts: 0,
      lastError: null,
      growRefused: {
        bytes: c.grow?.size.bytes ?? 0,
        quantity: c.grow?.size.quantity ?? '',
        storageClass: claim?.storageClass ?? '',
        message: error?.message ?? 'the StorageClass does not allow volume expansion',
        at: c.now,
      },
      grow: null,
    };
  },
  finishGrow: () => ({ grow: null, growRefused: null }),
} satisfies Record<string, Update>;

/** growVolume for the claim whose turn it is. */
export const growVolumeParams = ({ context: c }: Ctx): GrowVolumeParams => ({
  member: c.grow?.member ?? '',
  size: c.grow?.size.quantity ?? '',
});
