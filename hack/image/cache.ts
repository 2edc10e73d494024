/**
 * Directories the image build keeps between runs (npm ci's output, unpacked Debian packages)
 * under ~/.cache/etcd-operator/image: filled in a directory of this process's own and renamed
 * into place whole, so an interrupted build leaves nothing a later one trusts, and two builds
 * at once (make image beside make image-test) each get a complete one.
 */
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DONE = '.complete';

/** dir, filled by fill(tmp) the first time. */
export function cachedDir(dir: string, fill: (tmp: string) => void): string {
  if (existsSync(join(dir, DONE))) return dir;
  const tmp = `${dir}.${process.pid}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    fill(tmp);
    writeFileSync(join(tmp, DONE), '');
    if (existsSync(dir) && !existsSync(join(dir, DONE))) rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (err) {
    // Another build finished the same directory first: take theirs.
    if (!existsSync(join(dir, DONE))) throw err;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
