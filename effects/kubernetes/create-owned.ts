/**
 * Create for objects the operator owns. A name already taken is checked, not assumed: an
 * object with our controller is ours (a repeated run, or a run before a crash); any other is
 * someone else's and is never adopted or overwritten.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { ErrorCode } from '../../machines/error-codes.ts';
import { EffectError } from '../types.ts';
import { apiError, isConflict, isNotFound } from './_util.ts';
import { controllerUid } from './meta.ts';

/** How to create one owned object, and how to read it back when its name is taken. */
export interface CreateOwned<T extends { metadata?: V1ObjectMeta }> {
  /** Kind and name for messages, e.g. `Pod ns/etcd-0`. */
  readonly what: string;
  /** The code of a failed create, e.g. ERR_CREATE_POD. */
  readonly code: ErrorCode;
  /** The code for a name taken by an object that is not ours, e.g. ERR_CREATE_POD_FOREIGN. */
  readonly foreign: ErrorCode;
  /** uid the object's controller reference must carry to count as ours. */
  readonly ownerUid: string;
  readonly create: () => Promise<T>;
  readonly read: () => Promise<T>;
  /** Brings an existing object of ours up to date (create-or-patch); left out, it is kept as is. */
  readonly patch?: (existing: T) => Promise<T>;
}

/** The object, and whether this call created it. */
export interface Owned<T> {
  readonly object: T;
  readonly created: boolean;
}

/** Creates the object, or finds it ours already; a foreign object of that name is a non-retryable error. */
export async function createOwned<T extends { metadata?: V1ObjectMeta }>(o: CreateOwned<T>): Promise<Owned<T>> {
  try {
    return { object: await o.create(), created: true };
  } catch (err) {
    if (!isConflict(err)) throw apiError(o.code, `creating ${o.what}`, err);
  }
  let existing: T;
  try {
    existing = await o.read();
  } catch (err) {
    // Taken a moment ago and gone now (being deleted): a retry creates it.
    if (isNotFound(err))
      throw new EffectError(o.code, `${o.what} was there and is gone now; retrying creates it`, { cause: err });
    throw apiError(o.code, `reading ${o.what}`, err);
  }
  if (controllerUid(existing.metadata) !== o.ownerUid) {
    throw new EffectError(
      o.foreign,
      `${o.what} exists and is not ours (controller uid ${controllerUid(existing.metadata) ?? 'none'}, expected ${o.ownerUid}): delete or rename it`,
      { retryable: false },
    );
  }
  if (!o.patch) return { object: existing, created: false };
  try {
    return { object: await o.patch(existing), created: false };
  } catch (err) {
    throw apiError(o.code, `updating ${o.what}`, err);
  }
}
