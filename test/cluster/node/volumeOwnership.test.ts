import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { needsOwnership, setVolumeOwnership } from './volumeOwnership.ts';

const root = mkdtempSync(join(os.tmpdir(), 'node-owner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const GROUP = 65532;

/** A volume as root-run etcd leaves it: 0700 directories, 0600 files, and a symlink. */
function rootVolume(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'data', 'member', 'wal'), { recursive: true });
  chmodSync(join(dir, 'data'), 0o700);
  writeFileSync(join(dir, 'data', 'member', 'wal', '0.wal'), 'x', { mode: 0o600 });
  chmodSync(join(dir, 'data', 'member', 'wal', '0.wal'), 0o600);
  writeFileSync(join(dir, 'keep'), 'x', { mode: 0o400 });
  chmodSync(join(dir, 'keep'), 0o400);
  symlinkSync('keep', join(dir, 'link'));
  return dir;
}

const mode = (p: string) => statSync(p).mode & 0o7777;

describe.runIf(process.getuid?.() === 0)('node: fsGroup on a volume, as the kubelet applies it', () => {
  it('makes every file and directory the group’s, group-writable, directories setgid', () => {
    const dir = rootVolume('rw');
    expect(needsOwnership(dir, GROUP)).toBe(true);
    setVolumeOwnership(dir, GROUP);
    expect(needsOwnership(dir, GROUP)).toBe(false);
    for (const p of ['', 'data', 'data/member', 'data/member/wal', 'data/member/wal/0.wal', 'keep'])
      expect(statSync(join(dir, p)).gid, p || '/').toBe(GROUP);
    expect(statSync(join(dir, 'data')).uid).toBe(0); // the owner stays
    expect(mode(join(dir, 'data'))).toBe(0o2770);
    expect(mode(join(dir, 'data', 'member', 'wal', '0.wal'))).toBe(0o660);
    expect(mode(join(dir, 'keep'))).toBe(0o660);
    // The link itself is the group's; its target's mode is not touched through it.
    expect(lstatSync(join(dir, 'link')).gid).toBe(GROUP);
  });

  it('read-only adds the group’s read bits only', () => {
    const dir = rootVolume('ro');
    setVolumeOwnership(dir, GROUP, { readOnly: true });
    expect(mode(join(dir, 'data'))).toBe(0o2750);
    expect(mode(join(dir, 'data', 'member', 'wal', '0.wal'))).toBe(0o640);
    expect(mode(join(dir, 'keep'))).toBe(0o440);
  });

  it('OnRootMismatch leaves a volume whose root is already the group’s; Always walks it again', () => {
    const dir = rootVolume('policy');
    setVolumeOwnership(dir, GROUP, { policy: 'OnRootMismatch' });
    expect(mode(join(dir, 'keep'))).toBe(0o660);
    writeFileSync(join(dir, 'later'), 'x', { mode: 0o600 });
    chmodSync(join(dir, 'later'), 0o600);
    setVolumeOwnership(dir, GROUP, { policy: 'OnRootMismatch' });
    expect(mode(join(dir, 'later'))).toBe(0o600);
    setVolumeOwnership(dir, GROUP);
    expect(mode(join(dir, 'later'))).toBe(0o660);
  });
});
