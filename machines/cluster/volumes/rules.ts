/**
 * What the cluster machine knows and decides about its members' volumes: raising storage.size
 * expands each member's PersistentVolumeClaim, one patch at a time, and the step ends once
 * every claim's capacity shows the new size (the node finished growing its file system).
 * Invariants: a claim is asked to grow once per size (a patch to the size it already asks for
 * is a no-op); a StorageClass that refuses expansion is reported and tried again later, never
 * in a loop; members made after the change get the new size from the spec, not from this step.
 * Pure: time is the events' `at`.
 */
import type { MemberObservation } from '../../types.ts';

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

/** Every member that stays has a claim, bound, that shows spec.storage.size to its Pod. */
export const volumesShowSize = (c: VolumesView): boolean => {
  const size = c.volumeSize;
  if (!size) return false;
  const claims = c.claims ?? [];
  return c.members
    .filter((m) => !m.deleting)
    .every((m) => claims.some((k) => k.member === m.name && claimDone(k, size.bytes)));
};

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
