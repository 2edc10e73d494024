/**
 * The sized class's volumes: each a tmpfs mounted at the volume's directory with `size=` the
 * claim's size, so a Pod (which gets the directory as a bind mount of the same file system)
 * sees that size in statfs and df. Growing is `mount -o remount,size=`: same file system, data
 * kept, every bind mount sees the new size at once. Needs root.
 */
import { execFile } from 'node:child_process';
import { access, mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { StorageError } from './errors.ts';

const run = promisify(execFile);

/** The mount points of tmpfs file systems in this process's mount namespace. */
async function tmpfsMounts(): Promise<string[]> {
  const lines = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n');
  // mountinfo: ... mountpoint(5th) ... " - " fstype source options; octal escapes for spaces.
  return lines
    .map((l) => l.split(' - '))
    .filter(([, after]) => after?.startsWith('tmpfs '))
    .map(([before]) => (before ?? '').split(' ')[4] ?? '')
    .map((p) => p.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
}

/** The names of the directories under `dir` that are tmpfs mount points. */
export async function mountedUnder(dir: string): Promise<string[]> {
  const prefix = `${path.resolve(dir)}/`;
  return (await tmpfsMounts())
    .filter((p) => p.startsWith(prefix) && !p.slice(prefix.length).includes('/'))
    .map((p) => p.slice(prefix.length));
}

async function mount(args: string[], what: string): Promise<void> {
  try {
    await run('mount', args);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new StorageError('ERR_MOUNT', `${what}: ${(e.stderr ?? e.message).trim()}`, { cause: err });
  }
}

/** Mounts a tmpfs of `bytes` at `dir` (made first); a directory mounted already is left as it is. */
export async function mountSized(dir: string, bytes: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  if ((await tmpfsMounts()).includes(path.resolve(dir))) return;
  await mount(['-t', 'tmpfs', '-o', `size=${bytes}`, 'etcd-operator-local-sized', dir], `mounting ${dir}`);
}

/** Grows (or sets) the tmpfs at `dir` to `bytes`, keeping its data. */
export async function resizeSized(dir: string, bytes: number): Promise<void> {
  await mount(['-o', `remount,size=${bytes}`, dir], `resizing ${dir} to ${bytes} bytes`);
}

/** Unmounts the tmpfs at `dir` when one is mounted there (lazily when a process still holds it). */
export async function unmountSized(dir: string): Promise<void> {
  if (!(await tmpfsMounts()).includes(path.resolve(dir))) return;
  try {
    await run('umount', [dir]);
  } catch {
    await run('umount', ['-l', dir]);
  }
}

/** Copies what the tmpfs at `dir` holds to `saved` (replacing it) and unmounts it: a stop keeps the data. */
export async function saveAndUnmount(dir: string, saved: string): Promise<void> {
  await rm(saved, { recursive: true, force: true });
  await mkdir(saved, { recursive: true });
  // cp -a: owners too (a member's files are its fsGroup's), which node:fs cp does not keep.
  await run('cp', ['-a', `${dir}/.`, `${saved}/`]);
  await unmountSized(dir);
}

/** Puts back into the tmpfs at `dir` what a stop saved, and drops the copy. */
export async function restoreSaved(saved: string, dir: string): Promise<boolean> {
  try {
    await access(saved);
  } catch {
    return false;
  }
  await run('cp', ['-a', `${saved}/.`, `${dir}/`]);
  await rm(saved, { recursive: true, force: true });
  return true;
}
