import { describe, expect, it } from 'vitest';
import { chooseWindows, choosePoints, countReached, countWindows, readReached, spread } from './points.ts';

/** A count-file line of a failpoint in a window. */
const at = (failpoint: string, id: string, about: string): string => `${failpoint}\t${id}\t${about}`;

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

  it('numbers each failpoint on its own and keeps the window each time fell in', () => {
    const text = [
      at('before-journal-step', 'aa', 'member: voter -etcd.probe.answered-> voter []'),
      at('after-journal-step', 'aa', 'member: voter -etcd.probe.answered-> voter []'),
      at('before-journal-step', 'aa', 'member: voter -etcd.probe.answered-> voter []'),
    ].join('\n');
    expect(readReached(text)).toEqual([
      { failpoint: 'before-journal-step', n: 1, window: 'aa', about: 'member: voter -etcd.probe.answered-> voter []' },
      { failpoint: 'after-journal-step', n: 1, window: 'aa', about: 'member: voter -etcd.probe.answered-> voter []' },
      { failpoint: 'before-journal-step', n: 2, window: 'aa', about: 'member: voter -etcd.probe.answered-> voter []' },
    ]);
  });

  it('every window: a probe repeated ten times is one point, its first n; each other window its own', () => {
    const probe = at('after-journal-step', 'p1', 'member: voter -etcd.probe.answered-> voter []');
    const add = at('after-journal-step', 'a1', 'cluster: observing -k8s.cluster.changed-> scaling [addLearner]');
    const ran = at(
      'after-effect',
      'e1',
      'cluster: observing -k8s.cluster.changed-> scaling [addLearner] | addLearner ok',
    );
    const text = [probe, probe, add, ran, probe, probe, add, ran, ...Array<string>(6).fill(probe)].join('\n');
    const reached = readReached(text);
    expect(chooseWindows(reached)).toEqual([
      {
        failpoint: 'after-journal-step',
        n: 1,
        window: 'p1',
        about: 'member: voter -etcd.probe.answered-> voter []',
      },
      {
        failpoint: 'after-journal-step',
        n: 3,
        window: 'a1',
        about: 'cluster: observing -k8s.cluster.changed-> scaling [addLearner]',
      },
      {
        failpoint: 'after-effect',
        n: 1,
        window: 'e1',
        about: 'cluster: observing -k8s.cluster.changed-> scaling [addLearner] | addLearner ok',
      },
    ]);
    expect(countReached(text)['after-journal-step']).toBe(12);
    expect(countWindows(reached)).toEqual({
      'before-journal-step': 0,
      'after-journal-step': 2,
      'after-status': 0,
      'after-effect': 1,
      'after-outcome': 0,
    });
  });

  it('every window: the same window at two failpoints is a point at each', () => {
    const step = 'cluster: observing -k8s.cluster.changed-> scaling [addLearner]';
    const reached = readReached([at('before-journal-step', 'a1', step), at('after-status', 'a1', step)].join('\n'));
    expect(chooseWindows(reached).map((p) => `${p.failpoint}:${p.n}@${p.window}`)).toEqual([
      'before-journal-step:1@a1',
      'after-status:1@a1',
    ]);
  });

  it('every window: a count file without windows (an older manager) gives every n', () => {
    const reached = readReached('after-effect\nafter-effect\n');
    expect(chooseWindows(reached)).toEqual([
      { failpoint: 'after-effect', n: 1 },
      { failpoint: 'after-effect', n: 2 },
    ]);
  });
});
