/**
 * The kubelet's AtomicWriter (pkg/volume/util/atomic_writer.go) for Secret, ConfigMap,
 * projected and downward API volumes: a payload is written into a fresh timestamped directory,
 * the `..data` symlink is swapped to it with one rename, and each visible name is a symlink
 * through `..data`. Unlike the kubelet, the previous version's directory stays until the next write. A reader sees the whole old payload or the whole new one, never tls.crt of
 * one Secret version beside tls.key of another.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** One file of a payload: its bytes and its mode. */
export interface PayloadFile {
  readonly data: Buffer;
  readonly mode: number;
}

/** Relative path -> file; what a volume holds after a write. */
export type Payload = ReadonlyMap<string, PayloadFile>;

const DATA = '..data';
const DATA_TMP = '..data_tmp';

/** The kubelet's timestamped directory name, e.g. `..2026_11_25_14_05_10.123456789`. */
function stampName(now: Date, seq: number): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const date = `${now.getUTCFullYear()}_${p(now.getUTCMonth() + 1)}_${p(now.getUTCDate())}`;
  const time = `${p(now.getUTCHours())}_${p(now.getUTCMinutes())}_${p(now.getUTCSeconds())}`;
  return `..${date}_${time}.${p(now.getUTCMilliseconds(), 3)}${p(seq % 1_000_000, 6)}`;
}
let seq = 0;

/** Whether the files under `..data` are already exactly the payload (same names, bytes and modes). */
function unchanged(dir: string, payload: Payload): boolean {
  const current = join(dir, DATA);
  if (!existsSync(current)) return false;
  const files = (rel: string): string[] =>
    readdirSync(join(current, rel), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(rel, e.name)) : [join(rel, e.name)],
    );
  const present = files('');
  if (present.length !== payload.size) return false;
  return present.every((rel) => {
    const want = payload.get(rel);
    if (!want) return false;
    const file = join(current, rel);
    return (statSync(file).mode & 0o7777) === want.mode && readFileSync(file).equals(want.data);
  });
}

/**
 * Makes `dir` hold exactly `payload`, atomically; returns whether anything changed. With a
 * group, files and the timestamped directory are the group's and group-readable (fsGroup).
 */
export function writeAtomically(dir: string, payload: Payload, group?: number): boolean {
  mkdirSync(dir, { recursive: true });
  if (unchanged(dir, payload)) return false;
  const old = existsSync(join(dir, DATA)) ? readlinkSync(join(dir, DATA)) : undefined;
  const stamp = stampName(new Date(), seq++);
  const staged = join(dir, stamp);
  mkdirSync(staged, { mode: 0o755 });
  if (group !== undefined) chownSync(staged, -1, group);
  for (const [rel, file] of payload) {
    const path = join(staged, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, file.data);
    chmodSync(path, group === undefined ? file.mode : file.mode | 0o440);
    if (group !== undefined) chownSync(path, -1, group);
  }
  rmSync(join(dir, DATA_TMP), { force: true });
  symlinkSync(stamp, join(dir, DATA_TMP));
  renameSync(join(dir, DATA_TMP), join(dir, DATA)); // the one step a reader can observe
  const visible = new Set([...payload.keys()].map((rel) => rel.split('/')[0]!));
  for (const name of visible) {
    const link = join(dir, name);
    const st = lstatSync(link, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) continue; // already through ..data
    if (st) rmSync(link, { recursive: true, force: true }); // a file the node wrote before it wrote this way
    symlinkSync(join(DATA, name), link);
  }
  // Names the payload no longer has, and every version's directory but this one and the one
  // before. The kubelet removes the one before at once; a reader that had resolved `..data` to it
  // and not yet opened its file then fails (seen under load). Kept until the next write, a reader
  // misses a file only if it stalls across a whole write.
  for (const name of readdirSync(dir)) {
    const version = name.startsWith('..') && name !== DATA && name !== DATA_TMP;
    if ((!name.startsWith('..') && !visible.has(name)) || (version && name !== stamp && name !== old))
      rmSync(join(dir, name), { recursive: true, force: true });
  }
  return true;
}
