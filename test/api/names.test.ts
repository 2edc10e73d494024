/** The kinds' names as kubectl resolves them: none taken from another etcd operator. */
import { describe, expect, it } from 'vitest';
import { kinds } from '../../api/v1alpha1/index.ts';

/** Names other etcd operators' kinds answer to: etcd-druid's Etcd (etcds.druid.gardener.cloud). */
const TAKEN = ['etcd', 'etcds'];

describe('api: kind names', () => {
  it("no plural, singular or short name is another operator kind's, so `kubectl get` resolves the one meant", () => {
    const ours = kinds.flatMap((k) => [k.plural, k.singular, ...k.shortNames]);
    expect(ours.filter((n) => TAKEN.includes(n))).toEqual([]);
  });

  it('every name is unique across the kinds', () => {
    const ours = kinds.flatMap((k) => [k.plural, k.singular, ...k.shortNames]);
    expect(ours.length).toBe(new Set(ours).size);
  });
});
