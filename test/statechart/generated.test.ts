import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderStatechartFiles } from '../../statechart/docs.ts';

const root = join(import.meta.dirname, '../..');
const files = await renderStatechartFiles();

describe('statechart: generated charts', () => {
  for (const [path, content] of files) {
    it(`${path} is up to date with machines/ (run make generate)`, () => {
      expect(readFileSync(join(root, path), 'utf8')).toBe(content);
    });
  }
});
