/**
 * The shell script that turns a fresh mount namespace into a container's view of the machine:
 * volumes and image files bind-mounted at their real paths, then exec of the command, as the
 * container's user when its securityContext names one.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { dirname, sep } from 'node:path';
import { isRoot, setprivArgs, type Identity } from './securityContext.ts';

/** A host path mounted at a path inside the container. */
export interface Mount {
  readonly source: string;
  readonly target: string;
  readonly readOnly?: boolean;
}

/** Everything the sandbox script needs. */
export interface SandboxSpec {
  readonly mounts: readonly Mount[];
  /** A host directory of this container run; a private tmpfs is mounted over it inside. */
  readonly scratch: string;
  readonly hostname: string;
  readonly workingDir: string;
  /** Who the command runs as; root when absent. */
  readonly identity?: Identity;
  /** The Pod's network namespace (a path under /run/netns) the run enters; the host's when absent. */
  readonly netns?: string;
}

/** Quotes a string for /bin/sh. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

function within(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(dir + sep);
}

function deepestExisting(path: string): string {
  let p = path;
  while (!existsSync(p)) p = dirname(p);
  return realpathSync(p);
}

/**
 * Where a mount target does not exist on the host, its deepest existing directory gets a
 * private overlay inside the namespace, so mount points are made there and the host stays
 * untouched. Where that directory is / or holds a mount source, the mount point is made on the
 * host instead (an empty file or directory), since an overlay would hide the source.
 */
export function overlayDirs(spec: SandboxSpec): string[] {
  const sources = [spec.scratch, ...spec.mounts.map((m) => m.source)].map((s) => realpathSync(s));
  const dirs = new Set<string>();
  const wd = existsSync(spec.workingDir) ? '/' : deepestExisting(spec.workingDir);
  if (wd !== '/' && !sources.some((s) => within(s, wd))) dirs.add(wd);
  for (const m of spec.mounts) {
    if (existsSync(m.target)) continue;
    const base = deepestExisting(m.target);
    if (base === '/' || sources.some((s) => within(s, base)) || !statSync(base).isDirectory()) {
      if (statSync(m.source).isDirectory()) mkdirSync(m.target, { recursive: true });
      else {
        mkdirSync(dirname(m.target), { recursive: true });
        writeFileSync(m.target, '', { flag: 'a' });
      }
      continue;
    }
    dirs.add(base);
  }
  const sorted = [...dirs].sort((a, b) => a.length - b.length);
  return sorted.filter((d, i) => !sorted.slice(0, i).some((outer) => within(d, outer)));
}

/** The machine's mount points (this process's view), from /proc/self/mountinfo. */
export function mountPoints(): string[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const unescape = (p: string): string =>
    p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return [...new Set(text.split('\n').flatMap((l) => (l ? [unescape(l.split(' ')[4] ?? '')] : [])))];
}

/**
 * Mounts under an overlaid directory that the overlay would hide (an overlay shows its lower
 * directory's own files, not what is mounted below it): /dev/pts and /dev/shm when /dev is
 * overlaid for a mount point there. Only the outermost: each is carried over with its submounts.
 */
export function hiddenMounts(dirs: readonly string[], mounts: readonly string[]): string[] {
  const under = mounts.filter((m) => dirs.some((d) => m !== d && within(m, d)));
  return under.filter((m) => !under.some((outer) => outer !== m && within(m, outer)));
}

/** The script run by /bin/sh inside the new namespaces; "$@" is the command. */
export function sandboxScript(spec: SandboxSpec): string {
  const q = shellQuote;
  const lines = ['set -e', `mount -t tmpfs -o size=64m,mode=700 tmpfs ${q(spec.scratch)}`];
  const dirs = overlayDirs(spec);
  const kept = hiddenMounts(dirs, mountPoints());
  // Best effort: a mount that cannot be carried over stays hidden, as it was before.
  const keep = (i: number): string => q(`${spec.scratch}/k${i}`);
  kept.forEach((m, i) =>
    lines.push(`mkdir -p ${keep(i)}`, `mount --rbind ${q(m)} ${keep(i)} 2>/dev/null || rmdir ${keep(i)}`),
  );
  dirs.forEach((dir, i) => {
    const up = `${spec.scratch}/u${i}`;
    const work = `${spec.scratch}/w${i}`;
    lines.push(`mkdir -p ${q(up)} ${q(work)}`);
    lines.push(`mount -t overlay overlay -o ${q(`lowerdir=${dir},upperdir=${up},workdir=${work}`)} ${q(dir)}`);
  });
  kept.forEach((m, i) =>
    lines.push(`if [ -d ${keep(i)} ]; then mkdir -p ${q(m)}; mount --move ${keep(i)} ${q(m)} || true; fi`),
  );
  // Parents before children, so a volume at /data and a subPath at /data/x both show.
  const mounts = [...spec.mounts].sort((a, b) => a.target.split('/').length - b.target.split('/').length);
  for (const m of mounts) {
    if (statSync(m.source).isDirectory()) lines.push(`mkdir -p ${q(m.target)}`);
    else lines.push(`mkdir -p ${q(dirname(m.target))}`, `[ -e ${q(m.target)} ] || : > ${q(m.target)}`);
    lines.push(`mount --bind ${q(m.source)} ${q(m.target)}`);
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${q(m.target)}`);
  }
  lines.push(`echo ${q(spec.hostname.slice(0, 63))} > /proc/sys/kernel/hostname`);
  lines.push(`mkdir -p ${q(spec.workingDir)}`, `cd ${q(spec.workingDir)}`);
  // The mounts need root; the command gets its user only now. Changing the uid clears the
  // parent-death signal, so this setpriv sets it again (it does so after the switch).
  const id = spec.identity;
  if (!id || isRoot(id)) lines.push('exec "$@"');
  else lines.push(`exec setpriv ${setprivArgs(id).map(q).join(' ')} --pdeathsig KILL -- "$@"`);
  return lines.join('\n');
}
