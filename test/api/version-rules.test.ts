/**
 * The EtcdCluster version rules as a table: which spec.version changes the API server lets
 * through and what it says when it refuses. The API server runs these CEL rules in the
 * api-validation e2e; here the same rule text is read as JavaScript (the subset of CEL they use:
 * has(), int(), split, comparisons), so every pair of versions is checked without a cluster.
 */
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_VERSION_PATTERN } from '../../api/v1alpha1/common.ts';
import { etcdCluster, MIN_PATCH_BEFORE } from '../../api/v1alpha1/etcdcluster.ts';

interface Side {
  readonly spec: { readonly version: string };
  readonly status?: { readonly version?: string };
}

/** The rules comparing the new spec.version with the old, each as its JavaScript reading and message. */
const rules = (etcdCluster.rules ?? [])
  .filter((r) => r.rule.includes('oldSelf.spec.version'))
  .map((r) => ({
    message: r.message,
    js: r.rule.replace(/has\(([\w.]+)\)/g, '($1 !== undefined)').replace(/\bint\(/g, 'Number('),
  }));

/** The messages of the rules a change from `from` to `to` breaks; none when it is allowed. */
function refusals(from: string, to: string, statusVersion?: string): string[] {
  const oldSelf: Side = { spec: { version: from }, ...(statusVersion ? { status: { version: statusVersion } } : {}) };
  return rules
    .filter((r) => runInNewContext(r.js, { self: { spec: { version: to } }, oldSelf }) !== true)
    .map((r) => r.message ?? '');
}

describe('api: spec.version changes', () => {
  it('knows the oldest patch each minor upgrades from: 3.5.32 before 3.6, 3.6.11 before 3.7', () => {
    expect(MIN_PATCH_BEFORE).toEqual({ '3.6': '3.5.32', '3.7': '3.6.11' });
    expect(rules).toHaveLength(4 + 2 * Object.keys(MIN_PATCH_BEFORE).length);
  });

  it.each([
    ['3.6.16', '3.7.3', 'the default to 3.7'],
    ['3.6.11', '3.7.3', 'the oldest 3.6 patch etcd upgrades to 3.7 from'],
    ['3.5.35', '3.6.16', '3.5 to 3.6'],
    ['3.5.32', '3.6.16', 'the oldest 3.5 patch etcd upgrades to 3.6 from'],
    ['3.7.3', '3.7.4', 'a newer 3.7 patch'],
    ['3.6.16', '3.6.16', 'no change'],
    ['3.6.16', '3.5.35', 'a downgrade of 3.6 to 3.5'],
    ['3.7.3', '3.6.16', 'a downgrade of 3.7 to 3.6'],
    ['3.6.0', '3.5.32', 'a downgrade to the oldest 3.5 patch fit to run beside 3.6'],
    ['3.7.3', '3.6.11', 'a downgrade to the oldest 3.6 patch fit to run beside 3.7'],
  ])('allows %s -> %s (%s)', (from, to) => {
    expect(refusals(from, to)).toEqual([]);
  });

  it.each([
    ['3.6.10', '3.7.3', "upgrade to 3.6.11 or later before 3.7: etcd's upgrade guide asks every 3.6 member"],
    ['3.6.0', '3.7.0', 'upgrade to 3.6.11 or later before 3.7'],
    ['3.5.31', '3.6.16', 'upgrade to 3.5.32 or later before 3.6'],
    ['3.5.35', '3.7.3', 'spec.version can move up one minor version at a time (3.5 to 3.6, then 3.6 to 3.7)'],
    ['3.7.3', '3.5.35', 'spec.version can move down one minor version at a time (3.7 to 3.6, then 3.6 to 3.5)'],
    ['3.7.3', '3.7.2', 'spec.version cannot go to an older patch of the same minor'],
    ['3.6.16', '3.6.15', 'spec.version cannot go to an older patch of the same minor'],
    ['3.6.16', '3.5.31', 'downgrade to 3.5.32 or later: a downgrade from 3.6 runs 3.5 and 3.6 members side by side'],
    ['3.7.3', '3.6.10', 'downgrade to 3.6.11 or later'],
    ['3.5.35', '3.4.37', 'etcd 3.4 is not run by this operator: a 3.5 cluster cannot be downgraded'],
  ])('refuses %s -> %s, saying: %s', (from, to, message) => {
    const said = refusals(from, to);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(message);
  });

  it('allows going back to status.version while a 3.6 -> 3.7 roll is unfinished, below it only a whole minor down', () => {
    expect(refusals('3.7.3', '3.6.16', '3.6.16')).toEqual([]);
    expect(refusals('3.6.16', '3.6.15', '3.6.15')).toEqual([]);
    expect(refusals('3.6.16', '3.6.14', '3.6.15')).not.toEqual([]);
    expect(refusals('3.7.3', '3.5.35', '3.6.16')).not.toEqual([]);
  });

  it.each([
    ['3.7.3', true],
    ['3.6.16', true],
    ['3.5.35', true],
    ['3.8.0', false],
    ['3.4.23', false],
    ['v3.7.3', false],
    ['3.7', false],
  ])('takes %s as a version: %s', (version, ok) => {
    expect(new RegExp(SUPPORTED_VERSION_PATTERN).test(version)).toBe(ok);
  });
});
