import { describe, expect, it } from 'vitest';
import { firstLine, projectSpans } from './summary-reporter.ts';

const file = (project: string) => ({ project: { name: project } });

describe('projectSpans', () => {
  it('gives each project its first start, last end, files and most at once, in the order they started', () => {
    const spans = new Map([
      [file('cluster'), { start: 10_000, end: 70_000 }],
      [file('cluster'), { start: 20_000, end: 40_000 }],
      // Starts as the first ends: one at a time with it, not two.
      [file('cluster'), { start: 70_000, end: 90_000 }],
      [file('image'), { start: 1_000, end: 9_000 }],
    ]);
    const lines = projectSpans(spans, 0).split('\n').slice(2);
    expect(lines).toEqual([
      '  image        1 s ->     9 s  1 files, at most 1 at once',
      '  cluster     10 s ->    90 s  3 files, at most 2 at once',
    ]);
  });

  it('counts a file that never ended as ending where it started', () => {
    const out = projectSpans(new Map([[file('unit'), { start: 5_000 }]]), 0);
    expect(out).toContain('unit      5 s ->     5 s  1 files, at most 1 at once');
  });
});

describe('firstLine', () => {
  it('follows a message that elides the asserted value with the value, on one line', () => {
    const error = {
      message: 'expected [ Array(1) ] to deeply equal []\n\n- Expected\n+ Received',
      actual: '[\n  "drains/812: 14 UNAVAILABLE: No connection established",\n]',
    };
    expect(firstLine(error)).toBe(
      'expected [ Array(1) ] to deeply equal []\n      actual: [ "drains/812: 14 UNAVAILABLE: No connection established", ]',
    );
  });

  it('keeps a message that shows its values as it is', () => {
    expect(firstLine({ message: 'expected 3 to be 5', actual: '3' })).toBe('expected 3 to be 5');
    expect(firstLine(new Error('hook timed out\nstack'))).toBe('hook timed out');
  });
});
