/**
 * The image's base: the few files Node needs from Debian 12 (bookworm) packages, taken with
 * `apt-get download` at pinned versions and unpacked with `dpkg-deb -x` (no maintainer scripts,
 * no package manager in the image), plus the files a package's scripts would have made (the CA
 * bundle) and the non-root user. Each package's copyright file is kept, and a dpkg status entry
 * per package so that image scanners see what is inside.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cachedDir } from './cache.ts';
import { join } from 'node:path';
import { USER_ID, JOURNAL_DIR } from './spec.ts';
import { treeEntries, type EntryMap, addEntry } from './tree.ts';

/** A Debian package the image takes files from. */
export interface DebianPackage {
  readonly name: string;
  /** Pinned, so that the image is a function of the commit; bump with the point releases. */
  readonly version: string;
  readonly why: string;
  /** Only these paths (and the copyright) are taken; default: everything but docs and tooling. */
  readonly only?: readonly string[];
}

/** The packages, at the versions bookworm ships. */
export const DEBIAN_PACKAGES: readonly DebianPackage[] = [
  { name: 'libc6', version: '2.36-9+deb12u14', why: 'the C library and loader Node links against' },
  { name: 'libgcc-s1', version: '12.2.0-14+deb12u1', why: 'libgcc_s, which Node and better-sqlite3 link' },
  { name: 'libstdc++6', version: '12.2.0-14+deb12u1', why: 'the C++ runtime of Node and better-sqlite3' },
  { name: 'gcc-12-base', version: '12.2.0-14+deb12u1', why: 'the copyright of the two above' },
  {
    name: 'ca-certificates',
    version: '20230311+deb12u1',
    why: 'the CA bundle (Node --use-system-ca)',
    only: ['usr/share/ca-certificates/mozilla/'],
  },
  {
    name: 'coreutils',
    version: '9.1-1',
    why: 'env, for the #!/usr/bin/env node of etcd-operator',
    only: ['usr/bin/env'],
  },
  { name: 'base-files', version: '12.4+deb12u14', why: 'os-release', only: ['etc/os-release', 'usr/lib/os-release'] },
];

/** What no one runs in the image: docs beside the copyright, tool data, unused libc parts. */
const DROPPED = [
  /^usr\/share\/(doc\/[^/]+\/(?!copyright$).+|man|info|lintian|locale|gcc|gdb)(\/|$)/,
  /^usr\/lib\/x86_64-linux-gnu\/gconv\//, // iconv's charsets: Node converts with its own ICU
  /^usr\/sbin\/update-ca-certificates$/,
  /^etc\/ca-certificates\//,
];

/** Downloads (once, into cacheDir) and unpacks a package; returns the directory it unpacked to. */
export function unpacked(pkg: DebianPackage, cacheDir: string): string {
  const dir = join(cacheDir, 'debian', `${pkg.name}_${pkg.version}`);
  return cachedDir(dir, (tmp) => {
    for (const cmd of ['apt-get', 'dpkg-deb']) {
      const found = spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
      if (!found)
        throw new Error(
          `make image takes its base from Debian packages: it needs ${cmd}, with Debian 12 (bookworm) in its apt sources`,
        );
    }
    try {
      execFileSync('apt-get', ['download', '-q', `${pkg.name}=${pkg.version}`], { cwd: tmp, stdio: 'pipe' });
    } catch (err) {
      const stderr = String((err as { stderr?: Buffer }).stderr ?? '');
      throw new Error(
        `apt-get download ${pkg.name}=${pkg.version} failed (a newer point release replaced it? ` +
          `\`apt-cache policy ${pkg.name}\` shows the current one; pin it in hack/image/debian.ts): ${stderr.trim()}`,
        { cause: err },
      );
    }
    const deb = readdirSync(tmp).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download ${pkg.name} wrote no .deb`);
    execFileSync('dpkg-deb', ['-x', join(tmp, deb), join(tmp, 'root')]);
    writeFileSync(join(tmp, 'control'), execFileSync('dpkg-deb', ['-f', join(tmp, deb)]));
    rmSync(join(tmp, deb));
  });
}

/** The base layer's entries: the packages' files, the CA bundle, the users, and the writable dirs. */
export function baseEntries(cacheDir: string): EntryMap {
  const entries: EntryMap = new Map();
  for (const pkg of DEBIAN_PACKAGES) {
    const dir = unpacked(pkg, cacheDir);
    const keep = (path: string): boolean =>
      pkg.only
        ? pkg.only.some((p) => path === p || (p.endsWith('/') && path.startsWith(p))) ||
          path === `usr/share/doc/${pkg.name}/copyright`
        : !DROPPED.some((re) => re.test(path));
    treeEntries(join(dir, 'root'), '', entries, keep);
    const status = controlStatus(readFileSync(join(dir, 'control'), 'utf8'));
    addEntry(entries, {
      path: `var/lib/dpkg/status.d/${pkg.name}`,
      type: 'file',
      mode: 0o644,
      content: Buffer.from(status),
    });
  }
  // What update-ca-certificates would write: every certificate, in order, in one file.
  const mozilla = join(
    unpacked(
      DEBIAN_PACKAGES.find((p) => p.name === 'ca-certificates')!,
      cacheDir,
    ),
    'root/usr/share/ca-certificates/mozilla',
  );
  const bundle = readdirSync(mozilla)
    .filter((f) => f.endsWith('.crt'))
    .sort()
    .map((f) => readFileSync(join(mozilla, f), 'utf8').replace(/\n?$/, '\n'))
    .join('');
  for (const [path] of entries) if (path.startsWith('usr/share/ca-certificates')) entries.delete(path);
  addEntry(entries, {
    path: 'etc/ssl/certs/ca-certificates.crt',
    type: 'file',
    mode: 0o644,
    content: Buffer.from(bundle),
  });
  const text = (path: string, content: string): void =>
    addEntry(entries, { path, type: 'file', mode: 0o644, content: Buffer.from(content) });
  text(
    'etc/passwd',
    `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${USER_ID}:${USER_ID}:nonroot:/home/nonroot:/sbin/nologin\n`,
  );
  text('etc/group', `root:x:0:\nnonroot:x:${USER_ID}:\n`);
  text('etc/nsswitch.conf', 'passwd: files\ngroup: files\nhosts: files dns\n');
  for (const path of ['tmp', 'var/tmp']) addEntry(entries, { path, type: 'dir', mode: 0o1777 });
  for (const path of ['home/nonroot', JOURNAL_DIR.slice(1)]) {
    addEntry(entries, { path, type: 'dir', mode: 0o755, uid: USER_ID, gid: USER_ID });
  }
  addEntry(entries, { path: 'root', type: 'dir', mode: 0o700 });
  return entries;
}

/** A dpkg status entry from a package's control file (what distroless writes to status.d). */
function controlStatus(control: string): string {
  const fields = control.replace(/\n*$/, '\n');
  return fields.replace(/^(Package: .*\n)/, '$1Status: install ok installed\n');
}
