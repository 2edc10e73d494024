import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../controlplane/tools.ts';
import { writeImageArchive } from './image.ts';
import { certManagerControllerImage } from './images.ts';

/** The release go.mod pins, read here on its own: the tag must be that release's. */
const pinned = /^\tgithub\.com\/cert-manager\/cert-manager (v\d+\.\d+\.\d+)$/m.exec(
  readFileSync(path.join(import.meta.dirname, '..', 'tools', 'cert-manager', 'go.mod'), 'utf8'),
)?.[1];

describe("cert-manager's controller image", () => {
  let dir: string;
  let config: { Entrypoint?: string[]; Cmd?: string[]; User?: string; WorkingDir?: string };
  let listing: string;
  let rootfs: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'images-test-'));
    const bin = path.join(dir, 'cert-manager');
    await writeFile(bin, '#!/bin/sh\n');
    await chmod(bin, 0o700);
    const out = path.join(dir, 'image.tar');
    const digest = await writeImageArchive(certManagerControllerImage(bin), out);
    const layout = path.join(dir, 'layout');
    await run('mkdir', ['-p', layout]);
    await run('tar', ['-xf', out, '-C', layout]);
    const blob = (d: string): string => path.join(layout, 'blobs', 'sha256', d.slice('sha256:'.length));
    const manifest = JSON.parse(await readFile(blob(digest), 'utf8')) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    config = (JSON.parse(await readFile(blob(manifest.config.digest), 'utf8')) as { config: typeof config }).config;
    listing = await run('tar', ['-tvf', blob(manifest.layers[0]!.digest)]);
    rootfs = path.join(dir, 'rootfs');
    await run('mkdir', ['-p', rootfs]);
    await run('tar', ['-xf', blob(manifest.layers[0]!.digest), '-C', rootfs]);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("is named as the chart names it, tagged with go.mod's release", () => {
    expect(pinned).toBeDefined();
    expect(certManagerControllerImage('/x').name).toBe(`quay.io/jetstack/cert-manager-controller:${pinned}`);
  });

  it("runs the controller from upstream's path as its entrypoint, with no command of its own", () => {
    expect(config.Entrypoint).toEqual(['/app/cmd/controller/controller']);
    expect(config.Cmd).toBeUndefined();
    expect(listing).toMatch(/-rwxr-xr-x 0\/0 .* \.\/app\/cmd\/controller\/controller$/m);
  });

  it("runs as distroless's nonroot user, a numeric uid the kubelet's runAsNonRoot accepts, named in /etc/passwd", async () => {
    expect(config.User).toBe('65532');
    expect(config.WorkingDir).toBe('/home/nonroot');
    const passwd = await readFile(path.join(rootfs, 'etc', 'passwd'), 'utf8');
    expect(passwd).toContain('nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n');
    expect(await readFile(path.join(rootfs, 'etc', 'group'), 'utf8')).toContain('nonroot:x:65532:\n');
    expect(listing).toMatch(/drwxr-xr-x 0\/0 .* \.\/home\/nonroot\/$/m);
    expect(listing).toMatch(/drwxrwxrwt 0\/0 .* \.\/tmp\/$/m);
  });
});
