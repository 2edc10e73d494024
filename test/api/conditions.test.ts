/** setCondition: one entry per type, and lastTransitionTime only moves when the status does. */
import { describe, expect, it } from 'vitest';
import { ConditionReason, ConditionType, setCondition } from '../../api/conditions.ts';

const t0 = '2025-01-01T00:00:00Z';
const t1 = new Date('2025-01-01T00:05:00.123Z');
const available = {
  type: ConditionType.Available,
  status: 'True' as const,
  reason: ConditionReason.QuorumHealthy,
  message: '3 of 3 voters healthy',
};

describe('setCondition', () => {
  it('adds a new condition stamped now', () => {
    const r = setCondition(undefined, available, t1);
    expect(r.changed).toBe(true);
    expect(r.conditions).toEqual([{ ...available, lastTransitionTime: '2025-01-01T00:05:00Z' }]);
  });

  it('setting the same condition again changes nothing', () => {
    const list = [{ ...available, lastTransitionTime: t0 }];
    const r = setCondition(list, available, t1);
    expect(r.changed).toBe(false);
    expect(r.conditions).toEqual(list);
  });

  it('a new message with the same status keeps lastTransitionTime', () => {
    const list = [{ ...available, lastTransitionTime: t0 }];
    const r = setCondition(list, { ...available, message: '2 of 3 voters healthy' }, t1);
    expect(r.changed).toBe(true);
    expect(r.conditions[0]).toMatchObject({ message: '2 of 3 voters healthy', lastTransitionTime: t0 });
  });

  it('a flipped status moves lastTransitionTime and leaves other types alone', () => {
    const progressing = {
      type: ConditionType.Progressing,
      status: 'True' as const,
      reason: 'ScalingUp',
      message: 'adding',
      lastTransitionTime: t0,
    };
    const list = [{ ...available, lastTransitionTime: t0 }, progressing];
    const r = setCondition(
      list,
      { ...available, status: 'False', reason: ConditionReason.QuorumLost },
      '2025-01-02T00:00:00Z',
    );
    expect(r.changed).toBe(true);
    expect(r.conditions).toEqual([
      { ...available, status: 'False', reason: ConditionReason.QuorumLost, lastTransitionTime: '2025-01-02T00:00:00Z' },
      progressing,
    ]);
    expect(list[0]?.status).toBe('True');
  });
});
