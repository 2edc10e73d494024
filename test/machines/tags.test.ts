import { initialTransition, transition, type AnyStateMachine } from 'xstate';
import { describe, expect, it } from 'vitest';
import { clusterMachine } from '../../machines/cluster.ts';
import { memberMachine } from '../../machines/member.ts';
import { snapshotScheduleMachine } from '../../machines/snapshot-schedule.ts';
import { pathHasTag, TAG, type Tag } from '../../machines/tags.ts';

const tagsAt = (machine: AnyStateMachine, path: string): Tag[] =>
  Object.values(TAG).filter((tag) => pathHasTag(machine, path, tag));

describe('state tags: what a state means outside the machines', () => {
  it.each([
    ['pending', ['idle']],
    ['steady', ['resting', 'idle', 'settled']],
    ['dormant', ['resting', 'idle', 'dormant']],
    ['failed', ['resting', 'idle', 'halted', 'failed']],
    ['degraded', ['resting', 'idle', 'warning', 'degraded']],
    ['replacing.joining.addingLearner.running', ['warning']],
    ['scalingUp.joining.promoting.backingOff', []],
    ['parking.awaitingPark', []],
    ['updatingBudget.running', []],
    ['updatingBudget.backingOff', []],
    ['defragmenting.running.running', []],
    ['defragmenting.awaitingHealth', []],
    ['recoveringSpace.compacting.running', ['warning']],
    ['recoveringSpace.defragmenting.movingLeader.running', ['warning']],
    ['outOfSpace', ['resting', 'idle', 'warning']],
    ['deleting', ['halted']],
  ])('cluster %s carries %j', (path, tags) => {
    expect(tagsAt(clusterMachine, path)).toEqual(tags);
  });

  it.each([
    ['voter', ['resting']],
    ['parking.stopped', ['resting']],
    ['parking.stoppingPod.running', []],
    ['replacing.stopped', ['warning']],
    ['nodeLost', ['warning']],
    ['removing.forcingPod.running', []],
    ['joiningLearner.catchingUp', []],
    ['removed', ['resting']],
    ['failed', ['resting', 'warning', 'failed']],
    ['pending', []],
  ])('member %s carries %j', (path, tags) => {
    expect(tagsAt(memberMachine, path)).toEqual(tags);
  });

  it.each([
    ['idle', ['resting', 'idle']],
    ['suspended', ['resting', 'idle']],
    ['invalid', ['resting', 'idle', 'warning']],
    ['failed', ['resting', 'idle', 'warning']],
    ['busy', ['idle']],
    ['creating.asking.running', []],
    ['pruning.asking.backingOff', []],
  ])('schedule %s carries %j', (path, tags) => {
    expect(tagsAt(snapshotScheduleMachine, path)).toEqual(tags);
  });

  it('a path the machine does not have carries none', () => {
    expect(tagsAt(clusterMachine, 'nowhere')).toEqual([]);
  });

  it('a snapshot reads the same tags with hasTag', () => {
    const [start] = initialTransition(clusterMachine, { cluster: { namespace: 'default', name: 'demo', uid: 'u' } });
    expect(start.hasTag(TAG.idle)).toBe(true);
    const [listed] = transition(clusterMachine, start, { type: 'k8s.members.listed', at: 1, members: [] });
    const [seeding] = transition(clusterMachine, listed, {
      type: 'k8s.cluster.updated',
      at: 2,
      spec: { replicas: 1, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    });
    expect(seeding.hasTag(TAG.idle)).toBe(false);
    expect(seeding.hasTag(TAG.resting)).toBe(false);
  });
});
