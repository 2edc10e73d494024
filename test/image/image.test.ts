/**
 * The operator image as `make image` builds it: two builds of one commit give one digest, and
 * the image unpacked by GNU tar (no container runtime) runs its commands as the non-root user
 * under `unshare --root`, as a kubelet would start it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildImage, type BuiltImage } from '../../hack/image/build.ts';
import { IMAGE_CONFIG, JOURNAL_DIR, USER_ID } from '../../hack/image/spec.ts';

const run = promisify(execFile);
// Under build/ (ignored by git, tsc, eslint and prettier): the unpacked image holds .ts files.
const artifacts = join(import.meta.dirname, '..', '..', 'build', 'test', 'image');
const version = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

/** Unpacks an OCI layout's layers, in order, into rootfs with GNU tar (owners kept: we are root). */
export async function unpack(layout: string, rootfs: string): Promise<void> {
  const blob = (digest: string): string => join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length));
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0]!.digest), 'utf8')) as {
    layers: { digest: string }[];
  };
  rmSync(rootfs, { recursive: true, force: true });
  mkdirSync(rootfs, { recursive: true });
  for (const layer of manifest.layers) await run('tar', ['-xzf', blob(layer.digest), '-C', rootfs]);
}

/** How inImage runs: readOnly remounts the root read-only with tmpfs volumes as the chart mounts them. */
interface RunOptions {
  readonly readOnly?: boolean;
}

/**
 * Runs a command in rootfs as the image's user, in new mount and PID namespaces, with the image's
 * Env; readOnly as the chart runs the manager: readOnlyRootFilesystem, the journal directory and
 * /var/tmp (TMPDIR) on volumes of their own.
 */
async function inImage(
  rootfs: string,
  argv: readonly string[],
  opts: RunOptions = {},
): Promise<{ code: number; out: string }> {
  const root = [`--root=${rootfs}`, `--wd=${IMAGE_CONFIG.WorkingDir}`, `--setuid=${USER_ID}`, `--setgid=${USER_ID}`];
  const volumes = [
    'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0"',
    `mount -t tmpfs -o uid=${USER_ID},gid=${USER_ID} journal "$0${JOURNAL_DIR}"`,
    'mount -t tmpfs -o mode=1777 tmp "$0/var/tmp"',
    'exec unshare "$@"',
  ].join(' && ');
  const args = opts.readOnly
    ? ['--mount', '--pid', '--fork', 'sh', '-c', volumes, rootfs, ...root, ...argv]
    : ['--mount', '--pid', '--fork', ...root, ...argv];
  const env = [...IMAGE_CONFIG.Env, ...(opts.readOnly ? ['TMPDIR=/var/tmp'] : [])];
  try {
    const { stdout, stderr } = await run('env', ['-i', ...env, 'unshare', ...args], { timeout: 60_000 });
    return { code: 0, out: stdout + stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, out: err.stdout + err.stderr };
  }
}

describe.runIf(process.getuid?.() === 0)('the operator image, built without Docker', () => {
  const rootfs = join(artifacts, 'rootfs');
  let first: BuiltImage;
  let second: BuiltImage;
  let later: BuiltImage;

  beforeAll(async () => {
    // One SOURCE_DATE_EPOCH for both, as one commit gives (a dirty tree builds at the commit's time too).
    first = await buildImage(join(artifacts, 'a'));
    second = await buildImage(join(artifacts, 'b'));
    // A later commit: only its time differs here.
    const epoch = process.env.SOURCE_DATE_EPOCH;
    process.env.SOURCE_DATE_EPOCH = '1800000000';
    try {
      later = await buildImage(join(artifacts, 'later'));
    } finally {
      if (epoch === undefined) delete process.env.SOURCE_DATE_EPOCH;
      else process.env.SOURCE_DATE_EPOCH = epoch;
    }
    await unpack(first.layout, rootfs);
  }, 900_000);

  it('two builds of one commit give the same digest and the same archive', () => {
    expect(second.digest).toBe(first.digest);
    expect(readFileSync(second.archive).equals(readFileSync(first.archive))).toBe(true);
  });

  it('a later commit changes only the sources layer: a push or a pull moves a few hundred KiB', () => {
    expect(later.digest).not.toBe(first.digest);
    const changed = later.layers.filter((l, i) => l.digest !== first.layers[i]!.digest);
    expect(changed.map((l) => l.name)).toEqual(['sources']);
    expect(changed[0]!.compressed).toBeLessThan(1024 * 1024);
  });

  it('is at most half the size of the Dockerfile image (node:24-bookworm-slim, about 400 MB unpacked)', () => {
    expect(first.unpackedBytes).toBeLessThan(200 * 1024 * 1024);
    expect(first.compressedBytes).toBeLessThan(64 * 1024 * 1024);
  });

  it('runs its entrypoint `version` as the non-root user', async () => {
    const r = await inImage(rootfs, [...IMAGE_CONFIG.Entrypoint, 'version']);
    expect(r).toEqual({ code: 0, out: `etcd-operator ${version} (node v24.21.0)\n` });
  });

  it('has etcd-operator on PATH (kubectl exec ... -- etcd-operator journal NAME) and no shell', async () => {
    const r = await inImage(rootfs, ['etcd-operator', 'manager', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^usage: etcd-operator manager/);
    expect(existsSync(join(rootfs, 'bin/sh'))).toBe(false);
  });

  it('runs every subcommand its usage lists, `kubectl etcd` too (kubectl exec ... -- etcd-operator kubectl-etcd status NAME)', async () => {
    const r = await inImage(rootfs, ['etcd-operator', 'kubectl-etcd', '--help']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/^usage: kubectl etcd COMMAND NAME/);
  });

  it("opens a journal (better-sqlite3's native addon) in the journal dir the non-root user owns", async () => {
    expect(statSync(join(rootfs, JOURNAL_DIR)).uid).toBe(USER_ID);
    const open = `const J = require('better-sqlite3'); const db = new J('${JOURNAL_DIR}/journal.db'); db.pragma('journal_mode = WAL'); console.log(db.prepare('select sqlite_version() v').get().v)`;
    const r = await inImage(rootfs, ['/usr/local/bin/node', '-e', open]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^3\.\d+\.\d+\n$/);
  });

  it('starts on a read-only root, as the chart runs it, and opens its journal on the volume', async () => {
    const script = [
      "const { Journal } = await import('/opt/etcd-operator/journal/index.ts');",
      `Journal.open('${JOURNAL_DIR}/journal.db').close();`,
      "const fs = await import('node:fs');",
      "try { fs.writeFileSync('/opt/etcd-operator/x', ''); } catch (e) { console.log(e.code); }",
      `console.log(fs.readdirSync('${JOURNAL_DIR}').sort().join(' '));`,
    ].join(' ');
    const r = await inImage(rootfs, ['/usr/local/bin/node', '--input-type=module', '-e', script], { readOnly: true });
    expect(r).toEqual({ code: 0, out: 'EROFS\njournal.db\n' });
  });

  it("runs the agent's check-data as a member's init container does (exit 3: the data is gone)", async () => {
    const r = await inImage(rootfs, [
      ...IMAGE_CONFIG.Entrypoint,
      'agent',
      'check-data',
      '--data-dir=/tmp/member',
      '--expect-data',
    ]);
    expect(r.code).toBe(3);
    expect(r.out).toContain('etcd data lost');
  });
});
