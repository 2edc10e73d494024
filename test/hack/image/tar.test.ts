/**
 * The layer writer's tar, read back by GNU tar: long paths (PAX), owners, modes, symlinks and
 * the one timestamp come out as written, and the same entries give the same bytes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tarStream, type TarEntry } from '../../../hack/image/tar.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(os.tmpdir(), 'tar-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const long = `opt/etcd-operator/node_modules/${'a-rather-long-package-name/'.repeat(5)}index.js`;
const entries: TarEntry[] = [
  { path: 'opt', type: 'dir', mode: 0o755 },
  { path: long, type: 'file', mode: 0o644, content: Buffer.from('module.exports = 1;\n') },
  { path: 'usr/local/bin/etcd-operator', type: 'symlink', mode: 0o777, target: '/opt/etcd-operator/manager/cli.ts' },
  { path: 'var/lib/etcd-operator', type: 'dir', mode: 0o755, uid: 65532, gid: 65532 },
  { path: 'tmp', type: 'dir', mode: 0o1777 },
];

async function written(name: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of tarStream(entries, 1_700_000_000)) chunks.push(c);
  const file = join(dir, name);
  writeFileSync(file, Buffer.concat(chunks));
  return file;
}

describe('layer tar', () => {
  it('reads back in GNU tar with its long paths, owners, modes, links and time', async () => {
    const { stdout } = await run('tar', ['--numeric-owner', '--full-time', '-tvf', await written('a.tar')], {
      env: { ...process.env, TZ: 'UTC' },
    });
    const rows = stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    expect(rows.map((r) => [r[0], r[1], r[3], r[4], r.slice(5).join(' ')])).toEqual([
      ['drwxr-xr-x', '0/0', '2023-11-14', '22:13:20', 'opt/'],
      ['-rw-r--r--', '0/0', '2023-11-14', '22:13:20', long],
      [
        'lrwxrwxrwx',
        '0/0',
        '2023-11-14',
        '22:13:20',
        'usr/local/bin/etcd-operator -> /opt/etcd-operator/manager/cli.ts',
      ],
      ['drwxr-xr-x', '65532/65532', '2023-11-14', '22:13:20', 'var/lib/etcd-operator/'],
      ['drwxrwxrwt', '0/0', '2023-11-14', '22:13:20', 'tmp/'],
    ]);
    const { stdout: content } = await run('tar', ['-xOf', join(dir, 'a.tar'), long]);
    expect(content).toBe('module.exports = 1;\n');
  });

  it('writes the same bytes for the same entries', async () => {
    const [a, b] = [await written('a.tar'), await written('b.tar')];
    const { stdout } = await run('sha256sum', [a, b]);
    const [x, y] = stdout
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]);
    expect(x).toBe(y);
  });
});
