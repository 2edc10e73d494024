/**
 * The refusal fixtures api-validation.test.ts (e2e) creates: each must be read whole before the
 * local cluster is up, or one unreadable file stops the whole e2e file with no test run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const dir = join(import.meta.dirname, '../fixtures/invalid');

describe('api: the invalid-object fixtures', () => {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    it(`${file} is YAML with a description, what the refusal says, and an object to create or update`, () => {
      const f = parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
      expect(typeof f.description).toBe('string');
      expect(typeof f.expect === 'string' || Array.isArray(f.expect)).toBe(true);
      expect(f.create !== undefined || (f.base !== undefined && f.update !== undefined)).toBe(true);
    });
  }
});
