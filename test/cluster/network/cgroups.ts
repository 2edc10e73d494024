/**
 * A cgroup v2 per Pod, so nftables can tell a Pod's packets from the host's even when the Pod
 * connects from 127.0.0.1 (it does unless it binds its own address). Processes are moved in
 * while an isolation is active and moved back at stop.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

const CGROUP_FS = '/sys/fs/cgroup';
/** Prefix of every network's cgroup root. */
export const PREFIX = 'etcd-operator-net-';

/** The cgroups of one network's Pods, under one directory of the cgroup v2 tree. */
export class PodCgroups {
  /** The directory as nft names it (relative to /sys/fs/cgroup). */
  readonly nftRoot: string;
  /** Depth of that directory in the cgroup v2 tree (nft's `level`). */
  readonly depth = 1;
  readonly #mount: string;
  readonly #name: string;
  readonly #origin = new Map<number, string>();

  private constructor(mount: string, nftPrefix: string, name: string) {
    this.#mount = mount;
    this.#name = name;
    this.nftRoot = `${nftPrefix}${name}`;
  }

  /** Finds the cgroup v2 tree (unified or hybrid); undefined when there is none we may write to. */
  static async open(name: string): Promise<PodCgroups | undefined> {
    const found = [
      { mount: CGROUP_FS, prefix: '' },
      { mount: path.join(CGROUP_FS, 'unified'), prefix: 'unified/' },
    ].find((c) => existsSync(path.join(c.mount, 'cgroup.controllers')));
    if (!found) return undefined;
    await sweep(found.mount);
    // Not root, or a read-only cgroup tree: isolation falls back to addresses alone.
    const made = await mkdir(path.join(found.mount, name), { recursive: true }).then(
      () => true,
      () => false,
    );
    return made ? new PodCgroups(found.mount, found.prefix, name) : undefined;
  }

  /** The nft name of a Pod's cgroup. */
  nftPod(ip: string): string {
    return `${this.nftRoot}/${ip}`;
  }

  /** Moves a process into its Pod's cgroup; false when it ended meanwhile. */
  async adopt(pid: number, ip: string): Promise<boolean> {
    const want = `/${this.#name}/${ip}`;
    const current = await currentCgroup(pid);
    if (current === undefined) return false;
    if (current === want) return true;
    if (!this.#origin.has(pid) && !current.startsWith(`/${this.#name}/`)) this.#origin.set(pid, current);
    await mkdir(path.join(this.#mount, want), { recursive: true });
    return writeFile(path.join(this.#mount, want, 'cgroup.procs'), String(pid)).then(
      () => true,
      () => false,
    );
  }

  /** Makes the Pod cgroup exist, so a rule can name it before any process is in it; returns its directory. */
  async ensure(ip: string): Promise<string> {
    const dir = path.join(this.#mount, this.#name, ip);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Moves every process back where it came from and removes the cgroups. */
  async close(): Promise<void> {
    const root = path.join(this.#mount, this.#name);
    const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
    for (const dir of entries.filter((e) => e.isDirectory()).map((e) => path.join(root, e.name))) {
      // A process forked meanwhile lands in the cgroup too: empty it until rmdir succeeds.
      for (let attempt = 0; attempt < 5; attempt++) {
        await this.#release(dir);
        if (
          await rmdir(dir).then(
            () => true,
            () => false,
          )
        )
          break;
      }
    }
    await rmdir(root).catch(() => undefined);
  }

  async #release(dir: string): Promise<void> {
    const procs = await readFile(path.join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const pid of procs.split('\n').filter(Boolean).map(Number)) {
      const back = this.#origin.get(pid) ?? '/';
      await writeFile(path.join(this.#mount, back, 'cgroup.procs'), String(pid)).catch(() =>
        writeFile(path.join(this.#mount, 'cgroup.procs'), String(pid)).catch(() => undefined),
      );
    }
  }
}

/**
 * Removes roots left by earlier networks: a root cannot be removed while sockets still point
 * at a Pod cgroup below it, which can outlast stop(). An empty, unpopulated root is unused.
 */
async function sweep(mount: string): Promise<void> {
  for (const name of await readdir(mount).catch(() => [] as string[])) {
    if (!name.startsWith(PREFIX)) continue;
    const stat = await readFile(path.join(mount, name, 'cgroup.stat'), 'utf8').catch(() => '');
    if (/^nr_descendants 0$/m.test(stat)) await rmdir(path.join(mount, name)).catch(() => undefined);
  }
}

async function currentCgroup(pid: number): Promise<string | undefined> {
  const text = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => undefined);
  return text
    ?.split('\n')
    .find((l) => l.startsWith('0::'))
    ?.slice(3);
}
