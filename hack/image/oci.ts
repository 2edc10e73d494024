/**
 * An OCI image layout (image-spec v1.1): each layer a gzipped tar blob named by its sha256, the
 * config and the manifest as canonical JSON blobs, index.json naming the manifest by its tag;
 * then the same layout as one tar (an "OCI archive", as skopeo's oci-archive: reads it).
 * Layers are compressed by `gzip -n`, whose output is the same on every machine.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tarStream, type TarEntry } from './tar.ts';

/** A blob in the layout, as a descriptor names it. */
export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly annotations?: Record<string, string>;
}

/** A written layer: its blob's descriptor and the digest of its uncompressed tar. */
export interface Layer {
  readonly blob: Descriptor;
  readonly diffId: string;
  readonly unpackedSize: number;
}

const LAYER_GZIP = 'application/vnd.oci.image.layer.v1.tar+gzip';

/** A gzipped tar written to a file: the digests (hex) of the file and of the tar inside, and their sizes. */
export interface GzippedTar {
  readonly sha256: string;
  readonly size: number;
  readonly tarSha256: string;
  readonly tarSize: number;
}

/** Writes the entries' tar through `gzip -n -6` to file (through a temporary file beside it, renamed). */
export async function writeGzippedTar(file: string, entries: readonly TarEntry[], mtime: number): Promise<GzippedTar> {
  const tmp = `${file}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  const raw = createHash('sha256');
  const packed = createHash('sha256');
  let tarSize = 0;
  const gzip = spawn('gzip', ['-n', '-6'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve, reject) => {
    gzip.on('error', reject);
    gzip.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`gzip exited ${code}`))));
  });
  const tap = (hash: ReturnType<typeof createHash>, count?: (n: number) => void): Transform =>
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        count?.(chunk.length);
        done(null, chunk);
      },
    });
  try {
    await Promise.all([
      pipeline(
        Readable.from(tarStream(entries, mtime)),
        tap(raw, (n) => (tarSize += n)),
        gzip.stdin,
      ),
      pipeline(gzip.stdout, tap(packed), createWriteStream(tmp)),
      exited,
    ]);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  return { sha256: packed.digest('hex'), size: statSync(file).size, tarSha256: raw.digest('hex'), tarSize };
}

/** Writes a layer's tar, gzipped, into layout/blobs/sha256. */
export async function writeLayer(layout: string, entries: readonly TarEntry[], mtime: number): Promise<Layer> {
  const blobs = join(layout, 'blobs', 'sha256');
  mkdirSync(blobs, { recursive: true });
  const tmp = join(blobs, `.layer-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const written = await writeGzippedTar(tmp, entries, mtime);
  renameSync(tmp, join(blobs, written.sha256));
  return {
    blob: { mediaType: LAYER_GZIP, digest: `sha256:${written.sha256}`, size: written.size },
    diffId: `sha256:${written.tarSha256}`,
    unpackedSize: written.tarSize,
  };
}

/** Writes a JSON blob (keys in the order given, no whitespace) and returns its descriptor. */
export function writeJSONBlob(layout: string, mediaType: string, value: unknown): Descriptor {
  const body = Buffer.from(JSON.stringify(value));
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  mkdirSync(join(layout, 'blobs', 'sha256'), { recursive: true });
  writeFileSync(join(layout, 'blobs', 'sha256', digest.slice(7)), body);
  return { mediaType, digest, size: body.length };
}

/** What the image's manifest is made of. */
export interface ImageParts {
  readonly layers: readonly Layer[];
  /** The config's `config` (User, Env, Entrypoint...). */
  readonly config: Record<string, unknown>;
  readonly created: string;
  readonly history: readonly string[];
  readonly annotations: Record<string, string>;
  /** The tag index.json names the manifest by. */
  readonly tag: string;
}

/** Writes the config, the manifest, index.json and oci-layout; returns the manifest's and the config's descriptors. */
export function writeImage(layout: string, parts: ImageParts): { manifest: Descriptor; config: Descriptor } {
  const config = writeJSONBlob(layout, 'application/vnd.oci.image.config.v1+json', {
    created: parts.created,
    architecture: 'amd64',
    os: 'linux',
    config: parts.config,
    rootfs: { type: 'layers', diff_ids: parts.layers.map((l) => l.diffId) },
    history: parts.history.map((created_by) => ({ created: parts.created, created_by })),
  });
  const manifest = writeJSONBlob(layout, 'application/vnd.oci.image.manifest.v1+json', {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config,
    layers: parts.layers.map((l) => l.blob),
    annotations: parts.annotations,
  });
  const named = { ...manifest, annotations: { 'org.opencontainers.image.ref.name': parts.tag } };
  writeFileSync(
    join(layout, 'index.json'),
    JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [named] }),
  );
  writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  return { manifest, config };
}

/** The layout as one uncompressed tar, its entries in path order with one mtime. */
export async function writeArchive(
  layout: string,
  blobs: readonly string[],
  archive: string,
  mtime: number,
): Promise<void> {
  const file = (path: string): TarEntry => ({
    path,
    type: 'file',
    mode: 0o644,
    size: statSync(join(layout, path)).size,
    source: join(layout, path),
  });
  const entries: TarEntry[] = [
    { path: 'blobs', type: 'dir', mode: 0o755 },
    { path: 'blobs/sha256', type: 'dir', mode: 0o755 },
    ...[...new Set(blobs)].sort().map((d) => file(`blobs/sha256/${d.slice(7)}`)),
    file('index.json'),
    file('oci-layout'),
  ];
  const tmp = `${archive}.tmp`;
  rmSync(tmp, { force: true });
  await pipeline(Readable.from(tarStream(entries, mtime)), createWriteStream(tmp));
  renameSync(tmp, archive);
}
