import { describe, expect, it } from 'vitest';
import { pinnedRelease } from './tools.ts';

describe('pinnedRelease', () => {
  it('reads the release a wrapper module requires, direct or indirect (a tool directive)', () => {
    expect(pinnedRelease('cert-manager', 'github.com/cert-manager/cert-manager')).toMatch(/^v1\.\d+\.\d+$/);
    // versitygw's wrapper names it in a `tool` line, so its require is marked indirect.
    expect(pinnedRelease('versitygw', 'github.com/versity/versitygw')).toMatch(/^v\d+\.\d+\.\d+$/);
  });

  it('refuses a module the wrapper does not require, a prefix of one it does among them', () => {
    expect(() => pinnedRelease('versitygw', 'github.com/versity/versity')).toThrow(/does not require/);
  });
});
