import { describe, expect, it } from 'vitest';
import { installCrds } from './crds.ts';
import type { KubectlResult } from './types.ts';

const ok = (stdout: string): KubectlResult => ({ stdout, stderr: '', code: 0 });
const crd = (name: string, established: boolean | null) => ({
  metadata: { name },
  status: established === null ? {} : { conditions: [{ type: 'Established', status: established ? 'True' : 'False' }] },
});

describe('installCrds', () => {
  it('waits through CRDs the API server has not yet given a condition, then until they are Established', async () => {
    const names = ['etcdclusters.etcd-operator.dev', 'etcdmembers.etcd-operator.dev'];
    // What the API server shows after the apply: no conditions yet, then one not yet True, then both.
    const states = [
      [null, null],
      [true, false],
      [true, true],
    ];
    const calls: string[] = [];
    let explained = 0;
    const kubectl = (args: readonly string[]): Promise<KubectlResult> => Promise.resolve(answer(args));
    function answer(args: readonly string[]): KubectlResult {
      calls.push(args[0] ?? '');
      if (args[0] === 'apply')
        return ok(names.map((n) => `customresourcedefinition.apiextensions.k8s.io/${n}`).join('\n'));
      if (args[0] === 'wait')
        // kubectl 1.37's answer while a CRD has no conditions.
        return { stdout: '', stderr: '.status.conditions accessor error: <nil> is of the type <nil>', code: 1 };
      if (args[0] === 'get') {
        const now = states.shift() ?? [true, true];
        return ok(JSON.stringify({ items: names.map((n, i) => crd(n, now[i] ?? null)) }));
      }
      if (args[0] === 'explain') explained++;
      return ok('');
    }
    await installCrds(kubectl, 'crds');
    expect(calls.filter((c) => c === 'get')).toHaveLength(3);
    expect(explained).toBe(2);
  });
});
