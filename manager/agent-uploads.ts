/**
 * What the snapshot agent tidies in S3: the multipart uploads that earlier runs of snapshot Jobs
 * began and never finished. A run killed with SIGKILL (a node lost, the OOM killer) cannot abort
 * its own upload, and the store keeps and bills its parts for ever. The key of a snapshot is its
 * own (name and uid), so what is unfinished under it is a dead run's; beside it, in the cluster's
 * directory, only what is older than any Job may run is taken for dead.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { abortOpenUploads, type ObjectLocation, type OpenUpload } from '../effects/s3/index.ts';

/** A snapshot's object name as storedAt makes it: `NAME-UID8.db`, the uid's first 8 hex digits. */
const SNAPSHOT_OBJECT = /^[^/]+-[0-9a-f]{8}\.db$/;

/** The directory of a key, with its trailing slash ('' for a key at the bucket's top). */
export const dirOf = (key: string): string => key.slice(0, key.lastIndexOf('/') + 1);

/**
 * Whether an unfinished upload is a dead run's: under `key` itself, always (the caller's own
 * run has not begun or has completed); beside it, when it goes to a snapshot's object name and
 * was begun more than `olderThanMs` before `now` (every snapshot Job is stopped at its deadline).
 */
export function isLeftOver(u: OpenUpload, key: string, now: number, olderThanMs?: number): boolean {
  if (u.key === key) return true;
  if (olderThanMs === undefined || !u.key.startsWith(dirOf(key))) return false;
  if (!SNAPSHOT_OBJECT.test(u.key.slice(dirOf(key).length))) return false;
  return u.initiated !== undefined && u.initiated.getTime() < now - olderThanMs;
}

/** What a tidy did: how many uploads it aborted, and why it could not finish, if it could not. */
export interface Tidied {
  readonly aborted: number;
  readonly error?: string;
}

/**
 * Aborts the uploads left over under `to.key` (and with `olderThanMs`, beside it). Never throws:
 * a store that refuses to list or abort uploads (a policy without those rights) keeps them, and
 * the snapshot is not failed for it; the error says why.
 */
export async function tidyUploads(
  s3: S3Client,
  to: ObjectLocation,
  opts: { readonly olderThanMs?: number; readonly signal?: AbortSignal } = {},
): Promise<Tidied> {
  const now = Date.now();
  const prefix = opts.olderThanMs === undefined ? to.key : dirOf(to.key);
  try {
    const which = (u: OpenUpload) => isLeftOver(u, to.key, now, opts.olderThanMs);
    return { aborted: (await abortOpenUploads(s3, to.bucket, prefix, which, opts.signal)).length };
  } catch (err) {
    const e = err as Error;
    return {
      aborted: 0,
      error: `unfinished uploads under s3://${to.bucket}/${prefix} not aborted: ${e.name}: ${e.message}`,
    };
  }
}

/** Two tidies as the agent reports them: `abortedUploads`, and `uploadsNotAborted` when one failed. */
export function tidyReport(...tidies: Tidied[]): { abortedUploads: number; uploadsNotAborted?: string } {
  const aborted = tidies.reduce((n, t) => n + t.aborted, 0);
  const error = tidies.find((t) => t.error !== undefined)?.error;
  return { abortedUploads: aborted, ...(error !== undefined ? { uploadsNotAborted: error } : {}) };
}
