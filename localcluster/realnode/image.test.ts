import { createHash } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../controlplane/tools.ts';
import { writeImageArchive } from './image.ts';

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('writeImageArchive', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'image-test-'));
    await writeFile(path.join(dir, 'tool'), '#!/bin/sh\necho hi\n');
    await chmod(path.join(dir, 'tool'), 0o700);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const spec = (): Parameters<typeof writeImageArchive>[0] => ({
    name: 'quay.io/coreos/etcd:v3.6.16',
    files: [{ src: path.join(dir, 'tool'), dest: '/usr/local/bin/etcd' }],
    dirs: ['/var/lib/etcd'],
    cmd: ['/usr/local/bin/etcd'],
  });

  it('writes an OCI layout whose index names the image and whose blobs match their digests', async () => {
    const out = path.join(dir, 'a.tar');
    const digest = await writeImageArchive(spec(), out);
    const layout = path.join(dir, 'a');
    await run('mkdir', ['-p', layout]);
    await run('tar', ['-xf', out, '-C', layout]);
    const index = JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')) as {
      manifests: { digest: string; annotations: Record<string, string> }[];
    };
    expect(index.manifests[0]?.digest).toBe(digest);
    expect(index.manifests[0]?.annotations).toEqual({
      'io.containerd.image.name': 'quay.io/coreos/etcd:v3.6.16',
      'org.opencontainers.image.ref.name': 'v3.6.16',
    });
    const blob = (d: string): Promise<Buffer> => readFile(path.join(layout, 'blobs', 'sha256', d.slice(7)));
    const manifestBytes = await blob(digest);
    expect(sha(manifestBytes)).toBe(digest);
    const manifest = JSON.parse(manifestBytes.toString()) as {
      config: { digest: string; size: number };
      layers: { digest: string; size: number }[];
    };
    const config = await blob(manifest.config.digest);
    expect(sha(config)).toBe(manifest.config.digest);
    expect(config.length).toBe(manifest.config.size);
    const layer = await blob(manifest.layers[0]!.digest);
    expect(sha(layer)).toBe(manifest.layers[0]!.digest);
    const parsed = JSON.parse(config.toString()) as { config: { Cmd: string[] }; rootfs: { diff_ids: string[] } };
    expect(parsed.config.Cmd).toEqual(['/usr/local/bin/etcd']);
    expect(parsed.rootfs.diff_ids).toEqual([manifest.layers[0]!.digest]);
    // The layer: the file at its path, mode 755 (the source is 700), uid and gid 0; the empty dir.
    await writeFile(path.join(dir, 'layer.tar'), layer);
    const listing = await run('tar', ['-tvf', path.join(dir, 'layer.tar')]);
    expect(listing).toMatch(/-rwxr-xr-x 0\/0 .* \.\/usr\/local\/bin\/etcd/);
    expect(listing).toMatch(/\.\/var\/lib\/etcd\//);
  });

  it('writes files from content, hard links to a file of the image, and dirs with their modes', async () => {
    const out = path.join(dir, 'e.tar');
    await writeImageArchive(
      {
        name: 'docker.io/library/busybox:1.35.0-glibc',
        files: [
          { src: path.join(dir, 'tool'), dest: '/bin/busybox' },
          { content: 'root:x:0:0:root:/root:/bin/sh\n', dest: '/etc/passwd', mode: 0o644 },
        ],
        links: [{ dest: '/bin/sh', target: '/bin/busybox' }],
        dirs: [{ path: '/tmp', mode: 0o1777 }, '/root'],
        cmd: ['sh'],
      },
      out,
    );
    const layout = path.join(dir, 'e');
    await run('mkdir', ['-p', layout]);
    await run('tar', ['-xf', out, '-C', layout]);
    const index = JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    const blob = (d: string): string => path.join(layout, 'blobs', 'sha256', d.slice(7));
    const manifest = JSON.parse(await readFile(blob(index.manifests[0]!.digest), 'utf8')) as {
      layers: { digest: string }[];
    };
    const listing = await run('tar', ['-tvf', blob(manifest.layers[0]!.digest)]);
    expect(listing).toMatch(/-rw-r--r-- 0\/0 .* \.\/etc\/passwd/);
    expect(listing).toMatch(/hrwxr-xr-x 0\/0 .* \.\/bin\/sh link to \.\/bin\/busybox/);
    expect(listing).toMatch(/drwxrwxrwt 0\/0 .* \.\/tmp\//);
    expect(listing).toMatch(/drwxr-xr-x 0\/0 .* \.\/root\//);
  });

  it('gives the same digest for the same inputs', async () => {
    const a = await writeImageArchive(spec(), path.join(dir, 'b.tar'));
    const b = await writeImageArchive(spec(), path.join(dir, 'c.tar'));
    expect(a).toBe(b);
  });

  it('refuses a name without a tag', async () => {
    await expect(
      writeImageArchive({ ...spec(), name: 'quay.io/coreos/etcd' }, path.join(dir, 'd.tar')),
    ).rejects.toThrow(/needs a tag/);
  });
});
