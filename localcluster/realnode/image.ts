/**
 * OCI image archives built without a container engine: one uncompressed layer made by `tar` from
 * files of this machine, its config and manifest, in an OCI image layout packed as a tar that
 * `ctr images import` takes. The image keeps its real name (annotations of index.json).
 */
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { run } from '../controlplane/tools.ts';

/** A file of an image: copied from src on this machine, or written from content; dest is absolute. */
export type ImageFile = ({ readonly src: string } | { readonly content: string }) & {
  readonly dest: string;
  /** Default 0755. */
  readonly mode?: number;
};

/** One image: its full name and what goes in it. */
export interface ImageSpec {
  /** The full reference, e.g. quay.io/coreos/etcd:v3.6.16 (tag required). */
  readonly name: string;
  readonly files: readonly ImageFile[];
  /** Empty directories made in the image (absolute paths; mode 0755 unless given, e.g. 0o1777 for /tmp). */
  readonly dirs?: readonly (string | { readonly path: string; readonly mode: number })[];
  /** Hard links: dest (absolute) to target, a file of the image (as `busybox --install` makes its applets). */
  readonly links?: readonly { readonly dest: string; readonly target: string }[];
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
  readonly workingDir?: string;
  /** The user the container runs as (config.User), e.g. `65532`; root when unset. */
  readonly user?: string;
}

const sha256 = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/**
 * Writes the image as an OCI layout tar at out (renamed into place when complete) and returns the
 * manifest's digest. The layer's files are owned by root, dated the epoch and sorted, so the same
 * inputs give the same digests.
 */
export async function writeImageArchive(spec: ImageSpec, out: string): Promise<string> {
  const tag = /:([\w][\w.-]*)$/.exec(spec.name)?.[1];
  if (!tag || spec.name.includes('@')) throw new Error(`image name ${spec.name} needs a tag (and no digest)`);
  await mkdir(path.dirname(out), { recursive: true });
  const work = await mkdtemp(path.join(path.dirname(out), '.image-'));
  try {
    const root = path.join(work, 'rootfs');
    for (const d of spec.dirs ?? []) {
      const dir = path.join(root, typeof d === 'string' ? d : d.path);
      await mkdir(dir, { recursive: true });
      if (typeof d !== 'string') await run('chmod', [d.mode.toString(8), dir]);
    }
    for (const f of spec.files) {
      const dest = path.join(root, f.dest);
      await mkdir(path.dirname(dest), { recursive: true });
      if ('src' in f) await copyFile(f.src, dest);
      else await writeFile(dest, f.content);
      await run('chmod', [(f.mode ?? 0o755).toString(8), dest]);
    }
    for (const l of spec.links ?? []) {
      const dest = path.join(root, l.dest);
      await mkdir(path.dirname(dest), { recursive: true });
      await link(path.join(root, l.target), dest);
    }
    const layerPath = path.join(work, 'layer.tar');
    await run('tar', [
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--mtime=@0',
      '--format=posix',
      '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
      '-C',
      root,
      '-cf',
      layerPath,
      '.',
    ]);
    const layer = await readFile(layerPath);
    const layerDigest = sha256(layer);
    const config = JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      created: '1970-01-01T00:00:00Z',
      config: {
        Env: spec.env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        ...(spec.entrypoint ? { Entrypoint: spec.entrypoint } : {}),
        ...(spec.cmd ? { Cmd: spec.cmd } : {}),
        ...(spec.workingDir ? { WorkingDir: spec.workingDir } : {}),
        ...(spec.user ? { User: spec.user } : {}),
      },
      rootfs: { type: 'layers', diff_ids: [layerDigest] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'etcd-operator localcluster/realnode/image.ts' }],
    });
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: sha256(config),
        size: Buffer.byteLength(config),
      },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerDigest, size: layer.length }],
    });
    const manifestDigest = sha256(manifest);
    const index = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: manifestDigest,
          size: Buffer.byteLength(manifest),
          platform: { architecture: 'amd64', os: 'linux' },
          annotations: { 'io.containerd.image.name': spec.name, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    });
    const layout = path.join(work, 'layout');
    const blobs = path.join(layout, 'blobs', 'sha256');
    await mkdir(blobs, { recursive: true });
    const blob = (digest: string): string => path.join(blobs, digest.slice('sha256:'.length));
    await rename(layerPath, blob(layerDigest));
    await writeFile(blob(sha256(config)), config);
    await writeFile(blob(manifestDigest), manifest);
    await writeFile(path.join(layout, 'index.json'), index);
    await writeFile(path.join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    await run('tar', ['--sort=name', '--owner=0', '--group=0', '--mtime=@0', '-C', layout, '-cf', `${out}.tmp`, '.']);
    await rename(`${out}.tmp`, out);
    return manifestDigest;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
