/**
 * A Pod's fsGroup on a volume, as the kubelet's SetVolumeOwnership applies it to volumes that
 * support ownership management: every file and directory group-owned by fsGroup with the
 * group's read bits (and write bits unless read-only), directories also group-searchable and
 * setgid, so what a container creates there belongs to the group too.
 */
import { chmodSync, lchownSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';

const RW = 0o660;
const RO = 0o440;
const EXEC = 0o110;
const SETGID = 0o2000;

/** How a volume's ownership is brought to its fsGroup. */
export interface OwnershipOptions {
  /** A read-only volume gets the group's read bits only. */
  readonly readOnly?: boolean;
  /** The Pod's fsGroupChangePolicy: OnRootMismatch skips a volume whose root is already right. */
  readonly policy?: string;
}

/** Whether the volume's root is not yet as fsGroup wants it (the kubelet's requiresPermissionChange). */
export function needsOwnership(dir: string, fsGroup: number, readOnly = false): boolean {
  const st = statSync(dir);
  if (st.gid !== fsGroup || !st.isDirectory()) return true;
  const want = (readOnly ? RO : RW) | EXEC;
  return (st.mode & want) !== want || (st.mode & SETGID) === 0;
}

function change(path: string, st: Stats, fsGroup: number, readOnly: boolean): void {
  lchownSync(path, -1, fsGroup);
  // A symlink's mode means nothing, and chmod would change its target's: left alone, as the kubelet does.
  if (st.isSymbolicLink()) return;
  const mask = (readOnly ? RO : RW) | (st.isDirectory() ? EXEC | SETGID : 0);
  chmodSync(path, (st.mode & 0o7777) | mask);
}

/** Makes the volume at dir group-owned by fsGroup, recursively (unless OnRootMismatch finds the root right). */
export function setVolumeOwnership(dir: string, fsGroup: number, opts: OwnershipOptions = {}): void {
  const readOnly = opts.readOnly ?? false;
  if (opts.policy === 'OnRootMismatch' && !needsOwnership(dir, fsGroup, readOnly)) return;
  const walk = (path: string): void => {
    const st = lstatSync(path);
    change(path, st, fsGroup, readOnly);
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(dir);
}
