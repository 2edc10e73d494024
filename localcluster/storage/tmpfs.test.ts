import { chownSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mountedUnder, mountSized, resizeSized, restoreSaved, saveAndUnmount, unmountSized } from './tmpfs.ts';

const Mi = 2 ** 20;
const size = (dir: string): number => {
  const s = statfsSync(dir);
  return s.blocks * s.bsize;
};

describe.runIf(process.getuid?.() === 0)('local-sized volumes: a tmpfs of the claimed size', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sized-'));
  const volumes = path.join(root, 'volumes');
  const dir = path.join(volumes, 'c1');
  afterAll(async () => {
    await unmountSized(dir);
    rmSync(root, { recursive: true, force: true });
  });

  it('is seen at its size, grows in place with its data, and a stop keeps its data for the next mount', async () => {
    await mountSized(dir, 64 * Mi);
    await mountSized(dir, 64 * Mi); // mounted already: left as it is
    expect(await mountedUnder(volumes)).toEqual(['c1']);
    expect(size(dir)).toBe(64 * Mi);
    writeFileSync(path.join(dir, 'member'), 'data');
    chownSync(path.join(dir, 'member'), 65532, 65532);

    await resizeSized(dir, 128 * Mi);
    expect(size(dir)).toBe(128 * Mi);
    expect(readFileSync(path.join(dir, 'member'), 'utf8')).toBe('data');

    const saved = path.join(root, 'saved', 'c1');
    await saveAndUnmount(dir, saved);
    expect(await mountedUnder(volumes)).toEqual([]);
    await mountSized(dir, 128 * Mi);
    expect(await restoreSaved(saved, dir)).toBe(true);
    expect(readFileSync(path.join(dir, 'member'), 'utf8')).toBe('data');
    expect(statSync(path.join(dir, 'member')).uid).toBe(65532);
    expect(await restoreSaved(saved, dir)).toBe(false);
  });
});
