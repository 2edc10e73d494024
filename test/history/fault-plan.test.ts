import { describe, expect, it } from 'vitest';
import { ETCD_IMAGE_VERSIONS } from '../../localcluster/realnode/images.ts';
import { FAILPOINTS } from '../../manager/failpoints.ts';
import { SCENARIOS } from '../crash/scenarios.ts';
import { planFaultRun } from './fault-plan.ts';

const WITH_37 = { versions: ['3.5.35', '3.6.16', '3.7.3'] };
const SEEDS = Array.from({ length: 200 }, (_, i) => i * 7919 + 1);

describe('fault run plan', () => {
  it('is the same for the same seed, and differs between seeds', () => {
    expect(planFaultRun(42, WITH_37)).toEqual(planFaultRun(42, WITH_37));
    const orders = new Set(
      SEEDS.map((s) =>
        planFaultRun(s, WITH_37)
          .map((a) => a.scenario)
          .join(','),
      ),
    );
    expect(orders.size).toBeGreaterThan(150);
  });

  it('runs every action once a round (the defragmentation in the first), the rollback in place among them, each a crash-sweep scenario', () => {
    const names = SCENARIOS.map((s) => s.name);
    const every = [
      'ca-change',
      'downgrade-3.7',
      'node-loss',
      'replacement',
      'rollback',
      'scale-3-5',
      'scale-5-3',
      'upgrade-3.7',
    ];
    for (const seed of SEEDS) {
      const plan = planFaultRun(seed, WITH_37);
      const round = (r: number) =>
        plan
          .filter((a) => a.round === r)
          .map((a) => a.scenario)
          .sort();
      expect(round(1)).toEqual([...every, 'defrag', 'upgrade'].sort());
      for (const r of [2, 3]) expect(round(r)).toEqual(every);
      expect(plan.filter((a) => a.round > 3)).toEqual([]);
      for (const a of plan) expect(names).toContain(a.scenario);
    }
  });

  it('rolls 3.5 -> 3.6 -> 3.7 -> 3.6, then up and down again each round; scales 5 -> 3 right after 3 -> 5', () => {
    for (const seed of SEEDS) {
      const plan = planFaultRun(seed, WITH_37).map((a) => a.scenario);
      expect(plan.filter((n) => /grade/.test(n))).toEqual([
        'upgrade',
        ...Array.from({ length: 3 }, () => ['upgrade-3.7', 'downgrade-3.7']).flat(),
      ]);
      plan.forEach((n, i) => {
        if (n === 'scale-3-5') expect(plan[i + 1]).toBe('scale-5-3');
      });
    }
  });

  it('without a 3.7 image: up to 3.6 and back down to 3.5, each round', () => {
    const plan = planFaultRun(5, { versions: ['3.5.35', '3.6.16'], rounds: 2 }).map((a) => a.scenario);
    expect(plan.filter((n) => /grade/.test(n))).toEqual(['upgrade', 'downgrade', 'upgrade', 'downgrade']);
  });

  it('kills the manager in as many actions of each round as asked, at a failpoint it has', () => {
    for (const seed of SEEDS) {
      const plan = planFaultRun(seed, { ...WITH_37, rounds: 2, kills: 2 });
      for (const r of [1, 2]) {
        const kills = plan.filter((a) => a.round === r).flatMap((a) => (a.kill ? [a.kill] : []));
        expect(kills).toHaveLength(2);
        for (const k of kills) {
          expect(FAILPOINTS).toContain(k.failpoint);
          expect(k.n).toBeGreaterThanOrEqual(1);
        }
      }
    }
  });

  it('plans the 3.7 roll on the images the local cluster builds now', () => {
    expect(planFaultRun(1, { versions: ETCD_IMAGE_VERSIONS }).map((a) => a.scenario)).toContain('upgrade-3.7');
  });
});
