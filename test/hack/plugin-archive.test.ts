/**
 * The krew manifest agrees with what `make plugin-archive` packs: the version, the archive's top
 * directory and the launcher. (The archive built and installed by krew: test/e2e/kubectl-etcd.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { manifestWithSha256, MANIFEST, PLUGIN_PATHS } from '../../hack/plugin-archive.ts';

const root = join(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const text = readFileSync(MANIFEST, 'utf8');

interface Platform {
  uri: string;
  sha256: string;
  files: { from: string; to: string }[];
  bin: string;
}

describe('plugin/krew/etcd.yaml', () => {
  const manifest = parse(text) as { spec: { version: string; platforms: Platform[] } };

  it("names package.json's version, the archive's top directory and a launcher the archive holds", () => {
    expect(manifest.spec.version).toBe(`v${version}`);
    const [platform] = manifest.spec.platforms;
    expect(platform?.uri).toMatch(new RegExp(`/v${version}/kubectl-etcd-v${version}\\.tar\\.gz$`));
    expect(platform?.files).toEqual([{ from: `etcd-operator-${version}/*`, to: '.' }]);
    const packed = execFileSync('git', ['ls-files', '--', ...PLUGIN_PATHS], { cwd: root, encoding: 'utf8' }).split(
      '\n',
    );
    expect(packed).toContain(platform?.bin);
    expect(packed).toContain('manager/cli.ts');
  });

  it('takes the archive sha256 in place of the placeholder, and nothing else changes', () => {
    const sha = 'ab'.repeat(32);
    const filled = manifestWithSha256(text, sha);
    expect(manifest.spec.platforms[0]?.sha256).toBe('0'.repeat(64));
    expect((parse(filled) as typeof manifest).spec.platforms[0]?.sha256).toBe(sha);
    expect(filled.replace(sha, '0'.repeat(64))).toBe(text);
    expect(() => manifestWithSha256(text.replace(/sha256: .*/, 'sha256: ""'), sha)).toThrow(/no sha256/);
  });
});
