import { describe, expect, it } from 'vitest';
import { COMPLETES, holdAt, membershipRun } from '../../../machines/cluster/concerns.ts';
import { stepOf } from '../../../machines/cluster/ids.ts';

describe('cluster machine: what a step name answers, asked of the machine', () => {
  it.each([
    ['scalingUp.joining.promoting', 'scalingUp'],
    ['volumesRefused', 'volumesRefused'],
    ['', undefined],
    // A journal's path from a machine that had another step, or an object's own key, is no step.
    ['growing.one', undefined],
    ['constructor', undefined],
  ])('stepOf(%j) is %j', (path, step) => {
    expect(stepOf(path)).toBe(step);
  });

  it.each([
    ['scalingUp.joining.addingLearner', 'up'],
    ['scalingDown.removing.awaitingRemoval', 'down'],
    ['replacing.joining.promoting', undefined],
    ['observing', undefined],
  ])('membershipRun(%j) is %j', (path, run) => {
    expect(membershipRun(path)).toBe(run);
  });

  it('a refused expansion holds VolumesExpanded False; a step that holds nothing holds nothing', () => {
    expect(holdAt('volumesRefused')).toEqual({ condition: 'VolumesExpanded', reason: 'ExpansionNotAllowed' });
    expect(holdAt('resizingVolumes.patching')).toBeUndefined();
    expect(holdAt('steady')).toBeUndefined();
  });

  it('a step that completes is claimed by one concern only: two would record its end twice', () => {
    const steps = COMPLETES.map(([step]) => step);
    expect(steps.filter((s, i) => steps.indexOf(s) !== i)).toEqual([]);
  });
});
