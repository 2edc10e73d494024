import { describe, expect, it } from 'vitest';
import { choosePoints, countReached, spread } from './points.ts';

describe('crash sweep points', () => {
  it('counts each failpoint named in a count file and ignores anything else', () => {
    const counts = countReached('after-journal-step\nbefore-journal-step\nafter-journal-step\nnonsense\n\n');
    expect(counts).toEqual({
      'before-journal-step': 1,
      'after-journal-step': 2,
      'after-status': 0,
      'after-effect': 0,
      'after-outcome': 0,
    });
  });

  it('takes every n when the budget covers them, else points evenly spread over the first 80%', () => {
    expect(spread(0, 3)).toEqual([]);
    expect(spread(3, 3)).toEqual([1, 2, 3]);
    expect(spread(5, Infinity)).toEqual([1, 2, 3, 4, 5]);
    expect(spread(10, 3)).toEqual([1, 5, 8]);
    expect(spread(31, 4)).toEqual([1, 9, 16, 24]);
    expect(spread(7, 2)).toEqual([1, 5]);
    expect(spread(7, 1)).toEqual([1]);
    expect(spread(4, 3)).toEqual([1, 2, 3]);
  });

  it('lists the points failpoint by failpoint, none for a failpoint never reached', () => {
    const counts = countReached('after-effect\nafter-effect\nafter-outcome\n');
    expect(choosePoints(counts, 3)).toEqual([
      { failpoint: 'after-effect', n: 1 },
      { failpoint: 'after-effect', n: 2 },
      { failpoint: 'after-outcome', n: 1 },
    ]);
  });
});
