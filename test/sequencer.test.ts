/**
 * The e2e order's table (test/sequencer.ts) names every e2e file and only those, so a new slow
 * file is not left to start last by accident, and a renamed one is not kept under its old name.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SECONDS, E2E_SECONDS, expectedSeconds } from './sequencer.ts';

const e2eFiles = readdirSync(new URL('./e2e/', import.meta.url))
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/e2e/${f}`)
  .sort();

describe('the e2e order', () => {
  it('names every e2e file, and no file that is not one', () => {
    expect(Object.keys(E2E_SECONDS).sort()).toEqual(e2eFiles);
  });

  it('puts the five-minute schedule file before short ones, an unnamed e2e file early, and other files at 0', () => {
    expect(expectedSeconds('test/e2e/snapshot-schedules.test.ts')).toBeGreaterThan(
      expectedSeconds('test/e2e/cert-manager.test.ts'),
    );
    expect(expectedSeconds('test/e2e/new-one.test.ts')).toBe(DEFAULT_SECONDS);
    expect(expectedSeconds('test/machines/cluster.test.ts')).toBe(0);
  });
});
