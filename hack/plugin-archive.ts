/**
 * `make plugin-archive`: the archive `kubectl krew install` unpacks for `kubectl etcd`, and its
 * krew manifest with the archive's sha256 filled in (docs/kubectl-etcd.md, "krew").
 *
 *   node hack/plugin-archive.ts [--out DIR]     (default build/plugin)
 *
 * Writes DIR/kubectl-etcd-vVERSION.tar.gz: under the top directory etcd-operator-VERSION/, the
 * tracked files the CLI runs (package.json and the lockfile, the runtime folders the image
 * carries and plugin/), the licence, README, changelog and docs/, and the production
 * node_modules (`npm ci --omit=dev` of the lockfile into a staging directory cached per
 * lockfile and Node, the one the image's build keeps), pruned as the image's are, with
 * better-sqlite3's builds for the manifest's platforms. Names sorted, owners 0, modes 0644 or
 * 0755, every mtime SOURCE_DATE_EPOCH (default: the commit's time), `gzip -n`: two builds of one
 * tree give one sha256. Then DIR/etcd.yaml: plugin/krew/etcd.yaml with that sha256.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { moduleEntries, productionModules, trackedEntries } from './image/app.ts';
import { cacheDir } from './image/build.ts';
import { writeGzippedTar } from './image/oci.ts';
import { APP_FOLDERS } from './image/spec.ts';
import { sortedEntries } from './image/tree.ts';

const repo = resolve(import.meta.dirname, '..');

/** What the archive holds of the checkout besides node_modules. */
export const PLUGIN_PATHS = [
  'package.json',
  'package-lock.json',
  'LICENSE',
  'README.md',
  'CHANGELOG.md',
  'docs',
  ...APP_FOLDERS,
] as const;

/** better-sqlite3's builds the archive carries: the platforms of the manifest (Linux and macOS). */
const PLATFORMS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64'];

/** The checked-in manifest, whose sha256 is a placeholder until an archive exists. */
export const MANIFEST = join(repo, 'plugin', 'krew', 'etcd.yaml');

/** What a build wrote. */
export interface PluginArchive {
  readonly archive: string;
  readonly manifest: string;
  readonly sha256: string;
  /** The archive's size, and the tar's inside it. */
  readonly bytes: number;
  readonly unpackedBytes: number;
  readonly files: number;
  readonly seconds: number;
}

/** The manifest text with the archive's sha256 in place of the placeholder. */
export function manifestWithSha256(manifest: string, sha256: string): string {
  const placeholder = /^( +sha256: )"[0-9a-f]{64}"$/m;
  if (!placeholder.test(manifest)) throw new Error('the krew manifest has no sha256: "<64 hex digits>" line');
  return manifest.replace(placeholder, `$1"${sha256}"`);
}

/** Builds the archive and its manifest into out. */
export async function buildPluginArchive(out: string): Promise<PluginArchive> {
  const started = performance.now();
  const nodeBin = execFileSync(join(repo, 'hack/node.sh'), ['--pinned'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
  const epoch = Number(
    process.env.SOURCE_DATE_EPOCH ??
      execFileSync('git', ['log', '-1', '--format=%ct', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim(),
  );
  const top = `etcd-operator-${version}`;
  const cache = join(cacheDir(), 'image');
  mkdirSync(cache, { recursive: true });
  const modules = productionModules(repo, nodeBin, cache);
  const entries = new Map([
    ...trackedEntries(repo, PLUGIN_PATHS, top),
    ...moduleEntries(modules, `${top}/node_modules`, PLATFORMS),
  ]);
  for (const [path, e] of entries) {
    // krew unpacks directories and regular files alone, and refuses any name holding "..".
    if (e.type === 'symlink') entries.delete(path);
    else if (path.includes('..')) throw new Error(`krew would refuse the archive's entry ${path} (it holds "..")`);
  }
  mkdirSync(out, { recursive: true });
  const archive = join(out, `kubectl-etcd-v${version}.tar.gz`);
  const written = await writeGzippedTar(archive, sortedEntries(entries), epoch);
  const manifest = join(out, 'etcd.yaml');
  writeFileSync(manifest, manifestWithSha256(readFileSync(MANIFEST, 'utf8'), written.sha256));
  return {
    archive,
    manifest,
    sha256: written.sha256,
    bytes: written.size,
    unpackedBytes: written.tarSize,
    files: [...entries.values()].filter((e) => e.type === 'file').length,
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

const MiB = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(repo, 'build', 'plugin') } } });
  const built = await buildPluginArchive(resolve(values.out));
  console.log(`archive  ${built.archive}`);
  console.log(
    `  ${MiB(built.bytes)} gzipped, ${MiB(built.unpackedBytes)} unpacked, ${built.files} files, built in ${built.seconds} s`,
  );
  console.log(`sha256   ${built.sha256}`);
  console.log(`manifest ${built.manifest}`);
  console.log(`install  kubectl krew install --manifest=${built.manifest} --archive=${built.archive}`);
}
