/**
 * Maps container images to binaries of this machine: etcd, etcdctl and etcdutl built by
 * test/cluster/tools/build.sh at the image's version, the operator of this working tree,
 * versitygw, and BusyBox (the machine's own shell and tools).
 */
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { BUSYBOX_IMAGE } from '../images.ts';
import { ImagePullError } from './errors.ts';
import type { Mount } from './sandbox.ts';

const run = promisify(execFile);

/** The repository root, derived from this file's place in it. */
export const repoRoot = join(import.meta.dirname, '..', '..', '..');

/** A file the image carries, as a host file bind-mounted at its path inside the container. */
export interface ImageFile {
  /** Path inside the container, e.g. /usr/local/bin/etcd. */
  readonly path: string;
  /** Host file (or directory) mounted there. */
  readonly source?: string;
  /** Or: a script written for the container (the operator's wrapper). */
  readonly script?: string;
}

/** What a container of the image gets: its files and its default command. */
export interface ImageContents {
  readonly files: readonly ImageFile[];
  /** ENTRYPOINT + CMD of the image, used when the container sets no command. */
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
}

/** Where the operator image's Node and working tree are, as in the Dockerfile's image. */
const NODE_IN_IMAGE = '/usr/local/bin/node';
const TREE_IN_IMAGE = '/opt/etcd-operator';

const etcdImage = /^(?:quay\.io\/coreos|gcr\.io\/etcd-development)\/etcd:v(\d+\.\d+\.\d+)$/;

/** Splits an image reference into repository and tag (digests are refused: nothing to match). */
export function parseImage(image: string): { repository: string; tag: string } {
  const at = image.indexOf('@');
  const ref = at >= 0 ? image.slice(0, at) : image;
  const colon = ref.lastIndexOf(':');
  if (colon > ref.lastIndexOf('/')) return { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
  return { repository: ref, tag: 'latest' };
}

const cache = new Map<string, Promise<ImageContents>>();

/** Resolves an image to its local contents, building etcd once; throws ImagePullError when unknown. */
export function resolveImage(image: string): Promise<ImageContents> {
  let found = cache.get(image);
  if (!found) {
    found = resolve(image);
    cache.set(image, found);
    // A failed build is not remembered: a later pull may succeed (a build finished meanwhile).
    found.catch(() => cache.delete(image));
  }
  return found;
}

async function resolve(image: string): Promise<ImageContents> {
  const { repository } = parseImage(image);
  const etcd = etcdImage.exec(image);
  if (etcd) {
    const version = etcd[1]!;
    // As in the real image: the server, its client, and etcdutl (3.6 restores snapshots with it only).
    const tools = ['etcd', 'etcdctl', 'etcdutl'];
    const sources = await Promise.all(tools.map((t) => buildTool(image, t, version)));
    return {
      files: tools.map((t, i) => ({ path: `/usr/local/bin/${t}`, source: sources[i]! })),
      entrypoint: [],
      cmd: ['/usr/local/bin/etcd'],
    };
  }
  if (repository === 'etcd-operator' || repository.endsWith('/etcd-operator')) {
    // Node and this working tree are mounted where the real image has them, so a non-root user
    // reaches them whatever the modes of their parents on the host (a Node under /root, say).
    const script = `#!/bin/sh\nexec '${NODE_IN_IMAGE}' '${TREE_IN_IMAGE}/manager/cli.ts' "$@"\n`;
    return {
      files: [
        { path: '/usr/local/bin/etcd-operator', script },
        // A Node already there (the machine's) is not mounted over itself: that would make
        // /usr/local/bin hold a mount source, and the wrapper's mount point would go on the host.
        ...(process.execPath === NODE_IN_IMAGE ? [] : [{ path: NODE_IN_IMAGE, source: process.execPath }]),
        { path: TREE_IN_IMAGE, source: repoRoot },
      ],
      entrypoint: ['/usr/local/bin/etcd-operator'],
      cmd: [],
    };
  }
  const gateway = versitygwImage.exec(image);
  if (gateway) {
    // The S3-compatible server the snapshot tests and `make dev` store to, at the version build.sh builds.
    const built = await buildVersitygw(image, gateway[1]!);
    return {
      files: [{ path: '/usr/local/bin/versitygw', source: built }],
      entrypoint: ['/usr/local/bin/versitygw'],
      cmd: [],
    };
  }
  if (busyboxNames.has(image)) {
    // A container here sees the machine's files: its /bin/sh and tools stand in for BusyBox's.
    return { files: [], entrypoint: [], cmd: ['sh'] };
  }
  throw new ImagePullError(
    image,
    `this local node has no binaries for it (it runs quay.io/coreos/etcd:vX.Y.Z, gcr.io/etcd-development/etcd:vX.Y.Z, */etcd-operator, versity/versitygw:vX.Y.Z and ${BUSYBOX_IMAGE})`,
  );
}

/** BUSYBOX_IMAGE and the shorter names a Pod may give it. */
const busyboxNames = new Set([
  BUSYBOX_IMAGE,
  BUSYBOX_IMAGE.replace('docker.io/', ''),
  BUSYBOX_IMAGE.replace('docker.io/library/', ''),
]);

const versitygwImage = /^(?:docker\.io\/)?versity\/versitygw:(v\d+\.\d+\.\d+)$/;

/** The versitygw build.sh builds; only its own version is there (build.sh pins it). */
async function buildVersitygw(image: string, version: string): Promise<string> {
  const script = join(repoRoot, 'test', 'cluster', 'tools', 'build.sh');
  try {
    const { stdout } = await run(script, ['versitygw'], { maxBuffer: 1 << 20 });
    const path = stdout.trim().split('\n').pop() ?? '';
    if (!existsSync(path)) throw new Error('build.sh printed no binary for versitygw');
    if (!path.includes(`versitygw-${version}/`)) throw new Error(`build.sh builds another version: ${path}`);
    return path;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new ImagePullError(image, `no local versitygw ${version}: ${stderr || (err as Error).message}`);
  }
}

async function buildTool(image: string, tool: string, version: string): Promise<string> {
  const script = join(repoRoot, 'test', 'cluster', 'tools', 'build.sh');
  try {
    const { stdout } = await run(script, [tool, version], { maxBuffer: 1 << 20 });
    const path = stdout.trim().split('\n').pop() ?? '';
    if (!existsSync(path)) throw new Error(`build.sh printed no binary for ${tool} ${version}`);
    // With LOCALCLUSTER_BINARIES=path, build.sh hands out whatever etcd is on PATH.
    const { stdout: about } = await run(path, [tool === 'etcd' ? '--version' : 'version']);
    const found = /version: (\S+)/i.exec(about)?.[1];
    if (found !== version) throw new Error(`${path} is version ${found ?? 'unknown'}`);
    return path;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new ImagePullError(image, `no local ${tool} v${version}: ${stderr || (err as Error).message}`);
  }
}

/** The image's files as mounts; scripts are written into dir first. */
export function imageMounts(image: ImageContents, dir: string): Mount[] {
  return image.files.map((f) => {
    if (f.source) return { source: f.source, target: f.path, readOnly: true };
    const file = join(dir, basename(f.path));
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, f.script ?? '');
    chmodSync(file, 0o755);
    return { source: file, target: f.path, readOnly: true };
  });
}
