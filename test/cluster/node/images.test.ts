import { describe, expect, it } from 'vitest';
import { parseImage, repoRoot, resolveImage } from './images.ts';
import { BUSYBOX_IMAGE } from '../images.ts';

describe('images', () => {
  it('splits references into repository and tag', () => {
    expect(parseImage('quay.io/coreos/etcd:v3.6.16')).toEqual({ repository: 'quay.io/coreos/etcd', tag: 'v3.6.16' });
    expect(parseImage('localhost:5000/etcd-operator')).toEqual({
      repository: 'localhost:5000/etcd-operator',
      tag: 'latest',
    });
  });

  it('an etcd image is etcd, etcdctl and etcdutl of exactly that version, run by the default command', async () => {
    const image = await resolveImage('gcr.io/etcd-development/etcd:v3.6.16');
    expect(image.files.map((f) => f.path)).toEqual([
      '/usr/local/bin/etcd',
      '/usr/local/bin/etcdctl',
      '/usr/local/bin/etcdutl',
    ]);
    expect(image.cmd).toEqual(['/usr/local/bin/etcd']);
    expect(image.files[0]!.source).toMatch(/etcd-v3\.6\.16\/etcd$/);
  });

  it('an operator image runs this working tree through a wrapper, with Node and the tree where the image has them', async () => {
    const image = await resolveImage('ghcr.io/acme/etcd-operator:v0.1.0');
    expect(image.entrypoint).toEqual(['/usr/local/bin/etcd-operator']);
    expect(image.files[0]!.script).toBe(
      `#!/bin/sh\nexec '/usr/local/bin/node' '/opt/etcd-operator/manager/cli.ts' "$@"\n`,
    );
    expect(image.files.find((f) => f.path === '/opt/etcd-operator')?.source).toBe(repoRoot);
    if (process.execPath !== '/usr/local/bin/node')
      expect(image.files.find((f) => f.path === '/usr/local/bin/node')?.source).toBe(process.execPath);
  });

  it('the versitygw image is the S3 server build.sh builds, and only at its version', async () => {
    const image = await resolveImage('versity/versitygw:v1.8.0');
    expect(image.files[0]).toMatchObject({ path: '/usr/local/bin/versitygw' });
    expect(image.files[0]!.source).toMatch(/versitygw-v1\.8\.0\/versitygw$/);
    await expect(resolveImage('versity/versitygw:v1.7.0')).rejects.toThrow(/no local versitygw v1\.7\.0/);
  });

  it("the busybox image, by any of its names, is the machine's own shell and tools", async () => {
    for (const name of [BUSYBOX_IMAGE, 'library/busybox:1.35.0-glibc', 'busybox:1.35.0-glibc'])
      expect(await resolveImage(name)).toEqual({ files: [], entrypoint: [], cmd: ['sh'] });
  });

  it('an image with no local binaries, or an etcd series with no wrapper module, cannot be pulled', async () => {
    await expect(resolveImage('busybox:1.36')).rejects.toThrow(
      /failed to pull image "busybox:1.36": this local node has no binaries for it/,
    );
    await expect(resolveImage('quay.io/coreos/etcd:v3.4.30')).rejects.toThrow(/no wrapper module for etcd 3\.4/);
    await expect(resolveImage('busybox:1.36')).rejects.toHaveProperty('code', 'ERR_IMAGE_PULL');
  });
});
