/**
 * What the cluster machine knows and decides about its members' volumes: raising storage.size
 * expands each member's PersistentVolumeClaim, one patch at a time, and the step ends once
 * every claim's capacity shows the new size (the node finished growing its file system).
 * Invariants: a claim is asked to grow once per size (a patch to the size it already asks for
 * is a no-op); a StorageClass that refuses expansion is reported and tried again later, never
 * in a loop; members made after the change get the new size from the spec, not from this step.
 * Pure: time is the events' `at`.
 */
import { ERR } from './error-codes.ts';
import type { GrowVolumeParams, MemberObservation } from './types.ts';

/** How long a refused expansion waits before it is tried again (the StorageClass may be edited meanwhile). */
export const GROW_RECHECK_MS = 5 * 60_000;

/** spec.storage.size: as written (what a claim is patched to) and in bytes (what is compared). */
export interface VolumeSize {
  readonly quantity: string;
  readonly bytes: number;
}

/** A member's PersistentVolumeClaim as the cluster machine sees it; sizes in bytes. */
export interface ClaimObservation {
  readonly member: string;
  /** spec.storageClassName; empty when the claim names none. */
  readonly storageClass: string;
  /** spec.resources.requests.storage. */
  readonly requested: number;
  /** status.capacity.storage; null until the claim is bound. */
  readonly capacity: number | null;
  /** The node has still to grow the file system (FileSystemResizePending): the Pod does not see it yet. */
  readonly pending?: boolean;
  /** Why a resize failed, as the claim's conditions or allocatedResourceStatuses say. */
  readonly failure?: string;
}

/** The expansion in flight: the size latched when it began, and the claims already asked for it. */
export interface VolumeGrowth {
  readonly size: VolumeSize;
  readonly patched: readonly string[];
  /** The member whose claim is being patched now. */
  readonly member: string | null;
}

/** An expansion the StorageClass refused: the size, the class, and when, for the retry. */
export interface GrowRefusal {
  readonly bytes: number;
  readonly quantity: string;
  readonly storageClass: string;
  readonly message: string;
  readonly at: number;
}

/** What the cluster context holds for volumes; every field optional, so older journals read. */
export interface VolumesContext {
  /** spec.storage.size; null for storage.medium Memory (no claims). */
  readonly volumeSize?: VolumeSize | null;
  readonly claims?: readonly ClaimObservation[];
  readonly grow?: VolumeGrowth | null;
  readonly growRefused?: GrowRefusal | null;
}

/** What the volume rules read besides their own fields. */
export interface VolumesView extends VolumesContext {
  readonly members: readonly MemberObservation[];
  readonly now: number;
}

/** The claims of members that stay (not being deleted), in member order. */
function liveClaims(c: VolumesView): ClaimObservation[] {
  const live = c.members.filter((m) => !m.deleting).map((m) => m.name);
  return (c.claims ?? []).filter((k) => live.includes(k.member));
}

/** Whether a claim's Pod sees `bytes`: its capacity shows it and no file-system resize is pending. */
export const claimDone = (k: ClaimObservation, bytes: number): boolean =>
  k.capacity !== null && k.capacity >= bytes && k.requested >= bytes && k.pending !== true;

/** Bound claims smaller than `bytes` (asked or seen): the ones an expansion is for. */
export const claimsShort = (c: VolumesView, bytes: number): ClaimObservation[] =>
  liveClaims(c).filter((k) => k.capacity !== null && !claimDone(k, bytes));

/** Whether the refusal still stands for the size wanted now (until GROW_RECHECK_MS has passed). */
export const refusalStands = (c: VolumesView): boolean =>
  c.growRefused != null && c.growRefused.bytes === c.volumeSize?.bytes && c.now < c.growRefused.at + GROW_RECHECK_MS;

/** The volume step decide wants: grow the claims, report a refusal, or nothing. */
export function volumesDecision(c: VolumesView): 'resizingVolumes' | 'volumesRefused' | null {
  const size = c.volumeSize;
  if (!size || claimsShort(c, size.bytes).length === 0) return null;
  return refusalStands(c) ? 'volumesRefused' : 'resizingVolumes';
}

/** The next claim to patch: one asking for less than the latched size, not patched in this run. */
export const nextClaim = (c: VolumesView): ClaimObservation | undefined =>
  c.grow
    ? liveClaims(c).find(
        (k) => k.capacity !== null && k.requested < (c.grow?.size.bytes ?? 0) && !c.grow?.patched.includes(k.member),
      )
    : undefined;

/** Every live claim shows the latched size. */
export const growDone = (c: VolumesView): boolean =>
  c.grow != null && liveClaims(c).every((k) => k.capacity === null || claimDone(k, c.grow?.size.bytes ?? 0));

/** Where each member's claim stands: `demo-0 done, demo-1 waiting, demo-2 failed (...)`. */
export function growProgress(c: VolumesView, bytes: number): string {
  return liveClaims(c)
    .filter((k) => k.capacity !== null)
    .map((k) => {
      if (claimDone(k, bytes)) return `${k.member} done`;
      if (k.failure) return `${k.member} failed (${k.failure})`;
      if (k.requested < bytes) return `${k.member} to ask`;
      return k.pending ? `${k.member} waiting for its node to grow the file system` : `${k.member} waiting`;
    })
    .join(', ');
}

type Ctx = { context: VolumesView };

/** The code of a failed effect's event. */
const failureCode = (e: object): string | undefined =>
  'error' in e && typeof e.error === 'object' && e.error !== null ? (e.error as { code?: string }).code : undefined;

/** Guards of the volume step, by name. */
export const volumeGuards = {
  claimToPatch: ({ context: c }: Ctx) => nextClaim(c) !== undefined,
  volumesGrown: ({ context: c }: Ctx) => growDone(c),
  expansionNotAllowed: ({ event }: { event: object }) => failureCode(event) === ERR.VOLUME_EXPANSION_NOT_ALLOWED,
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
    const error = 'error' in e ? (e.error as { message?: string }) : undefined;
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

/** A step of an expansion: `growing volumes to 128Mi: demo-0 done, demo-1 waiting`. */
export function growMessage(sub: string, c: VolumesView): string {
  const g = c.grow;
  if (!g) return c.volumeSize ? `growing volumes to ${c.volumeSize.quantity}` : 'growing volumes to storage.size';
  const head = `growing volumes to ${g.size.quantity}: ${growProgress(c, g.size.bytes)}`;
  if (sub.startsWith('patching'))
    return `${head}; asking the claim of ${g.member ?? 'the next member'} for ${g.size.quantity}`;
  return `${head}; waiting until every claim's capacity shows it (the volume and its file system grown)`;
}

/** The StorageClass refused: what the user does, and when it is tried again. */
export function refusedMessage(c: VolumesView): string {
  const r = c.growRefused;
  if (!r) return 'volume expansion refused';
  const again = new Date(r.at + GROW_RECHECK_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return (
    `storage.size ${r.quantity} is not applied to the members' volumes: ${r.message}. ` +
    `Tried again at ${again}, or when storage.size changes; members made meanwhile get ${r.quantity}`
  );
}
