/**
 * The release path: the image `make image` built and the chart, pushed to an OCI registry, and
 * each read back from it to check that what is there is what was built.
 *
 *   node hack/release.ts --to REGISTRY/ORG [--plain-http] [--image build/image/etcd-operator-V.oci.tar]
 *
 * pushes REGISTRY/ORG/etcd-operator:VERSION (crane) and oci://REGISTRY/ORG/charts/etcd-operator
 * at VERSION (helm), both at package.json's version. Credentials are the tools' own: `crane auth
 * login` (or a Docker config) and `helm registry login`. --plain-http is for a registry without
 * TLS (the tests' local one).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';

const repo = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

/** A pinned tool's path, built once by localcluster/tools/build.sh (crane, helm). */
export async function tool(name: string): Promise<string> {
  const { stdout } = await run(join(repo, 'localcluster/tools/build.sh'), [name], { timeout: 1_800_000 });
  return stdout.trim();
}

/** What was pushed, as read back from the registry. */
export interface Released {
  /** REGISTRY/ORG/etcd-operator:VERSION */
  readonly image: string;
  /** The manifest digest the registry serves for it (the built one, or release() throws). */
  readonly imageDigest: string;
  /** oci://REGISTRY/ORG/charts/etcd-operator */
  readonly chart: string;
  readonly chartVersion: string;
  /** sha256 of the chart package helm pulled back (the pushed one's, or release() throws). */
  readonly chartDigest: string;
}

/** Options of release(). */
export interface ReleaseOptions {
  /** REGISTRY/ORG the image and the chart go under. */
  readonly to: string;
  /** The OCI archive `make image` wrote. */
  readonly archive: string;
  /** Talk HTTP, not HTTPS, to the registry. */
  readonly plainHttp?: boolean;
  /** Where helm keeps its registry config and cache (default: its own under HOME). */
  readonly helmHome?: string;
}

/** Pushes the image and the chart, pulls both back, and checks they are what was pushed. */
export async function release(opts: ReleaseOptions): Promise<Released> {
  const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
  const [crane, helm] = await Promise.all([tool('crane'), tool('helm')]);
  const insecure = opts.plainHttp ? ['--insecure'] : [];
  const plain = opts.plainHttp ? ['--plain-http'] : [];
  const env = opts.helmHome ? helmEnv(opts.helmHome) : process.env;
  const work = mkdtempSync(join(os.tmpdir(), 'release-'));
  try {
    // crane pushes an OCI layout directory: the archive's contents.
    await run('tar', ['-xf', opts.archive, '-C', work]);
    const index = JSON.parse(readFileSync(join(work, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    const built = index.manifests[0]!.digest;
    const image = `${opts.to}/etcd-operator:${version}`;
    await run(crane, ['push', ...insecure, work, image]);
    const { stdout: served } = await run(crane, ['digest', ...insecure, image]);
    if (served.trim() !== built)
      throw new Error(`${image} is ${served.trim()} in the registry, but ${built} was built`);
    // Every layer downloaded again and checked against its digest and the config's diff_id.
    await run(crane, ['validate', ...insecure, '--remote', image], { timeout: 600_000 });

    const chart = `oci://${opts.to}/charts`;
    await run(
      helm,
      ['package', join(repo, 'charts/etcd-operator'), '--version', version, '--app-version', version, '-d', work],
      { env },
    );
    const packaged = join(work, `etcd-operator-${version}.tgz`);
    await run(helm, ['push', packaged, chart, ...plain], { env });
    const pulled = join(work, 'pulled');
    mkdirSync(pulled);
    await run(helm, ['pull', `${chart}/etcd-operator`, '--version', version, '-d', pulled, ...plain], { env });
    const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
    const chartDigest = sha(join(pulled, `etcd-operator-${version}.tgz`));
    if (chartDigest !== sha(packaged)) throw new Error(`the chart pulled from ${chart} is not the one pushed`);
    return {
      image,
      imageDigest: built,
      chart: `${chart}/etcd-operator`,
      chartVersion: version,
      chartDigest: `sha256:${chartDigest}`,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** helm's environment with its config, cache and data under home (registry logins included). */
export function helmEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const k of ['XDG_CACHE_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'HELM_REGISTRY_CONFIG']) delete env[k];
  return env;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { to: { type: 'string' }, 'plain-http': { type: 'boolean', default: false }, image: { type: 'string' } },
  });
  if (!values.to) {
    console.error('usage: node hack/release.ts --to REGISTRY/ORG [--plain-http] [--image OCI-ARCHIVE]');
    process.exit(2);
  }
  const version = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string }).version;
  const archive = values.image ?? join(repo, 'build/image', `etcd-operator-${version}.oci.tar`);
  const r = await release({ to: values.to, archive, plainHttp: values['plain-http'] });
  console.log(`image ${r.image}@${r.imageDigest} (pushed, read back, every layer checked)`);
  console.log(`chart ${r.chart} --version ${r.chartVersion} (${r.chartDigest}, pushed and pulled back)`);
  console.log(`install: helm install etcd-operator ${r.chart} --version ${r.chartVersion} \\`);
  console.log(
    `  --namespace etcd-operator-system --create-namespace --set image.repository=${r.image.replace(/:[^:/]*$/, '')}`,
  );
}
