/** The chart README's Values table is values.yaml's comments, and every value has one. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { documentedValues, renderChartReadme } from '../../hack/chart-readme.ts';

const root = join(import.meta.dirname, '../..');
const valuesText = readFileSync(join(root, 'charts/etcd-operator/values.yaml'), 'utf8');

describe('chart README: the values table', () => {
  it('is up to date with values.yaml (run make generate)', () => {
    const [path, content] = renderChartReadme();
    expect(readFileSync(join(root, path), 'utf8')).toBe(content);
  });

  it('documents every value: each key of values.yaml, or a parent of it, has a `# -- ` comment', () => {
    const documented = documentedValues(valuesText).map((d) => d.key);
    const keys = (o: Record<string, unknown>, prefix = ''): string[] =>
      Object.entries(o).flatMap(([k, v]) =>
        documented.includes(`${prefix}${k}`)
          ? []
          : v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length
            ? keys(v as Record<string, unknown>, `${prefix}${k}.`)
            : [`${prefix}${k}`],
      );
    expect(keys(parse(valuesText) as Record<string, unknown>)).toEqual([]);
  });

  it('reads a nested key, its default and a comment over several lines', () => {
    const docs = documentedValues('a:\n  # -- First line\n  # second line.\n  b: 2\n\n# plain comment\nc: 3\n');
    expect(docs).toEqual([{ key: 'a.b', value: 2, description: 'First line second line.' }]);
  });
});
