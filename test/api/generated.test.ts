import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderAll } from '../../api/render.ts';

const root = join(import.meta.dirname, '../..');

describe('api: generated files', () => {
  for (const [path, content] of renderAll()) {
    it(`${path} is up to date with api/ (run make generate)`, () => {
      expect(readFileSync(join(root, path), 'utf8')).toBe(content);
    });
  }
});
