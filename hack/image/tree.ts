/**
 * A layer's contents as a map from image path to tar entry: files are added from directories on
 * disk with normalised owners and modes (0644, or 0755 when executable), and every parent
 * directory is added as 0755 root. Sorted by path, the map is the layer.
 */
import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { TarEntry } from './tar.ts';

/** The entries of one layer, by path. */
export type EntryMap = Map<string, TarEntry>;

/** Adds an entry, and its parent directories where missing; a later entry replaces an earlier one. */
export function addEntry(entries: EntryMap, entry: TarEntry): void {
  const parts = entry.path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    if (!entries.has(dir)) entries.set(dir, { path: dir, type: 'dir', mode: 0o755 });
  }
  entries.set(entry.path, entry);
}

/** Adds the files, symlinks and directories under root, placed under prefix, that keep accepts. */
export function treeEntries(root: string, prefix: string, entries: EntryMap, keep: (path: string) => boolean): void {
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      const full = join(dir, name);
      const st = lstatSync(full);
      const at = prefix ? `${prefix}/${path}` : path;
      if (st.isDirectory()) {
        walk(full, path);
      } else if (!keep(path)) {
        continue;
      } else if (st.isSymbolicLink()) {
        addEntry(entries, { path: at, type: 'symlink', mode: 0o777, target: readlinkSync(full) });
      } else if (st.isFile()) {
        addEntry(entries, { path: at, type: 'file', mode: fileMode(st.mode), size: st.size, source: full });
      }
    }
  };
  walk(root, '');
}

/** 0755 for what anyone may execute, else 0644: the build machine's umask never reaches the image. */
export function fileMode(mode: number): number {
  return mode & 0o111 ? 0o755 : 0o644;
}

/** The entries in path order (a parent before its children), as a layer is written. */
export function sortedEntries(entries: EntryMap): TarEntry[] {
  return [...entries.keys()].sort(byBytes).map((k) => entries.get(k)!);
}

function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
