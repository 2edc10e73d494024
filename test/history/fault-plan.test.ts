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
    expect(orders.size).toBeGreaterThan(50);
  });

  it('runs every action once, each a crash-sweep scenario', () => {
    const names = SCENARIOS.map((s) => s.name);
    for (const seed of SEEDS) {
      const plan = planFaultRun(seed, WITH_37).map((a) => a.scenario);
      expect([...plan].sort()).toEqual(
        [
          'ca-change',
          'defrag',
          'downgrade-3.7',
          'node-loss',
          'replacement',
          'scale-3-5',
          'scale-5-3',
          'upgrade',
          'upgrade-3.7',
        ].sort(),
      );
      for (const name of plan) expect(names).toContain(name);
    }
  });

  it('rolls 3.5 -> 3.6 -> 3.7 then down one minor, and scales 5 -> 3 right after 3 -> 5', () => {
    for (const seed of SEEDS) {
      const plan = planFaultRun(seed, WITH_37).map((a) => a.scenario);
      const at = (name: string) => plan.indexOf(name);
      expect(at('upgrade')).toBeLessThan(at('upgrade-3.7'));
      expect(at('upgrade-3.7')).toBeLessThan(at('downgrade-3.7'));
      expect(at('scale-5-3')).toBe(at('scale-3-5') + 1);
    }
  });

  it('without a 3.7 image: up to 3.6 and back down to 3.5', () => {
    const plan = planFaultRun(5, { versions: ['3.5.35', '3.6.16'] }).map((a) => a.scenario);
    expect(plan.filter((n) => /grade/.test(n))).toEqual(['upgrade', 'downgrade']);
  });

  it('kills the manager in as many actions as asked, at a failpoint it has', () => {
    for (const seed of SEEDS) {
      const kills = planFaultRun(seed, { ...WITH_37, kills: 3 }).flatMap((a) => (a.kill ? [a.kill] : []));
      expect(kills).toHaveLength(3);
      for (const k of kills) {
        expect(FAILPOINTS).toContain(k.failpoint);
        expect(k.n).toBeGreaterThanOrEqual(1);
      }
    }
  });

  it('plans the 3.7 roll on the images the local cluster builds now', () => {
    expect(planFaultRun(1, { versions: ETCD_IMAGE_VERSIONS }).map((a) => a.scenario)).toContain('upgrade-3.7');
  });
});
