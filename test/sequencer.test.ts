/**
 * The e2e order's table (test/sequencer.ts) names every e2e file and only those, so a new slow
 * file is not left to start last by accident, and a renamed one is not kept under its old name.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SECONDS,
  E2E_SECONDS,
  SERIAL_LEAD,
  SERIAL_PROJECT,
  expectedSeconds,
  serialAfterLead,
} from './sequencer.ts';

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

describe('the last group: serial files and unit files', () => {
  const file = (name: string, project: string, groupOrder: number) => ({
    name,
    project: { name: project, config: { sequence: { groupOrder } } },
  });
  it(`starts ${SERIAL_LEAD} serial files, then the unit files, then the other serial files, before a later group`, () => {
    const files = [
      file('e2e', 'cluster', 2),
      file('s1', SERIAL_PROJECT, 3),
      file('s2', SERIAL_PROJECT, 3),
      file('s3', SERIAL_PROJECT, 3),
      file('s4', SERIAL_PROJECT, 3),
      file('u1', 'unit', 3),
      file('u2', 'unit', 3),
      file('later', 'other', 4),
    ];
    expect(serialAfterLead(files).map((f) => f.name)).toEqual(['e2e', 's1', 's2', 'u1', 'u2', 's3', 's4', 'later']);
  });

  it('leaves an order without serial files past the lead as it is', () => {
    const files = [file('s1', SERIAL_PROJECT, 3), file('u1', 'unit', 3)];
    expect(serialAfterLead(files)).toEqual(files);
  });
});
