/**
 * The release path through a real OCI registry (distribution's, on 127.0.0.1): the image and the
 * chart pushed as a user would (hack/release.ts: crane, helm), then read back by a second client
 * of each: the image's manifest and layers pulled into a fresh OCI layout, the chart shown and
 * pulled from its oci:// URL.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildImage, type BuiltImage } from '../../hack/image/build.ts';
import { helmEnv, release, tool, type Released } from '../../hack/release.ts';
import { kubeVersion } from '../charts/helm.ts';
import { LocalRegistry } from '../../localcluster/registry.ts';

const run = promisify(execFile);
const version = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

describe('release: the image and the chart through an OCI registry', () => {
  const registry = new LocalRegistry();
  const home = mkdtempSync(join(os.tmpdir(), 'release-test-'));
  let built: BuiltImage;
  let released: Released;

  beforeAll(async () => {
    built = await buildImage(join(import.meta.dirname, '..', '..', 'build', 'test', 'release'));
    await registry.start();
    released = await release({
      to: `${registry.host}/etcd-operator`,
      archive: built.archive,
      plainHttp: true,
      helmHome: home,
    });
  }, 900_000);
  afterAll(async () => {
    await registry.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('serves the image under its version tag with the digest make image printed', () => {
    expect(released.image).toBe(`${registry.host}/etcd-operator/etcd-operator:${version}`);
    expect(released.imageDigest).toBe(built.digest);
  });

  it('gives the image back whole: pulled into a new OCI layout, every blob is the built one', async () => {
    const crane = await tool('crane');
    const out = join(home, 'pulled');
    await run(crane, ['pull', '--insecure', '--format=oci', released.image, out]);
    const index = JSON.parse(readFileSync(join(out, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(index.manifests.map((m) => m.digest)).toEqual([built.digest]);
    const blob = (layout: string, d: string): Buffer => readFileSync(join(layout, 'blobs/sha256', d.slice(7)));
    expect(blob(out, built.digest).equals(blob(built.layout, built.digest))).toBe(true);
    for (const layer of built.layers)
      expect(blob(out, layer.digest).equals(blob(built.layout, layer.digest))).toBe(true);
  });

  it('serves the chart at oci://REGISTRY/ORG/charts/etcd-operator, its appVersion the image tag', async () => {
    const helm = await tool('helm');
    const { stdout } = await run(helm, ['show', 'chart', released.chart, '--version', version, '--plain-http'], {
      env: helmEnv(home),
    });
    const chart = parse(stdout) as { name: string; version: string; appVersion: string };
    expect(chart).toMatchObject({ name: 'etcd-operator', version, appVersion: version });
  });

  it('renders from the registry with the pushed image set, as `helm install oci://...` would', async () => {
    const helm = await tool('helm');
    const repository = released.image.replace(/:[^:/]*$/, '');
    const args = [
      'template',
      'etcd-operator',
      released.chart,
      '--version',
      version,
      '--plain-http',
      '--kube-version',
      kubeVersion,
    ];
    const { stdout } = await run(helm, [...args, '--set', `image.repository=${repository}`], { env: helmEnv(home) });
    expect(stdout).toContain(`image: "${repository}:${version}"`);
    expect(stdout).toContain(`--agent-image=${repository}:${version}`);
  });
});
