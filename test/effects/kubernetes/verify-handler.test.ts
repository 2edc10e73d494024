import type { V1Job } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../../api/v1alpha1/index.ts';
import type { KubeContext } from '../../../effects/kubernetes/context.ts';
import { createVerifyJob } from '../../../effects/kubernetes/snapshot-handlers.ts';
import type { EffectError } from '../../../effects/types.ts';

const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/** The API an EtcdSnapshot and its Jobs live in, over maps, answering 404 and 409 as the API server does. Fake: no API server runs in unit tests. */
function setup(snapshotStatus: Partial<NonNullable<EtcdSnapshot['status']>>) {
  const snapshot = {
    apiVersion: 'etcd-operator.dev/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'nightly', namespace: 'prod', uid: 'snap-uid-1' },
    spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'backups' } }, verify: true },
    status: snapshotStatus,
  };
  const jobs = new Map<string, V1Job>();
  let created = 0;
  const ctx = {
    cluster: { namespace: 'prod', name: 'demo', uid: '' },
    signal: new AbortController().signal,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
    pods: {},
    kube: {
      custom: {
        getNamespacedCustomObject: () => Promise.resolve(structuredClone(snapshot)),
      },
      batch: {
        createNamespacedJob: (r: { body: V1Job }) => {
          const name = r.body.metadata?.name ?? '';
          if (jobs.has(name)) return Promise.reject(status(409));
          created += 1;
          const job = { ...r.body, metadata: { ...r.body.metadata, uid: `job-${created}` } };
          jobs.set(name, job);
          return Promise.resolve(structuredClone(job));
        },
        readNamespacedJob: (r: { name: string }) => {
          const job = jobs.get(r.name);
          return job ? Promise.resolve(structuredClone(job)) : Promise.reject(status(404));
        },
      },
    },
  } as unknown as KubeContext;
  return { ctx, jobs, count: () => created };
}

const recorded = {
  phase: 'Succeeded' as const,
  sha256: 'a'.repeat(64),
  revision: 12,
  etcdVersion: '3.6.16',
  hashKV: 7,
  compactRevision: -1,
  keys: 3,
};

describe('createVerifyJob handler', () => {
  it('a crash after the Job was made: recover finds it by name and owner, and a repeated run makes no second one', async () => {
    const { ctx, jobs, count } = setup(recorded);
    expect(await createVerifyJob.recover({ snapshot: 'nightly' }, ctx)).toEqual({ done: false });
    expect(await createVerifyJob.run({ snapshot: 'nightly' }, ctx)).toEqual({ uid: 'job-1' });
    expect([...jobs.keys()]).toEqual(['nightly-verify']);
    expect(jobs.get('nightly-verify')?.metadata?.ownerReferences?.[0]).toMatchObject({
      uid: 'snap-uid-1',
      controller: true,
    });
    expect(await createVerifyJob.recover({ snapshot: 'nightly' }, ctx)).toEqual({
      done: true,
      result: { uid: 'job-1' },
    });
    expect(await createVerifyJob.run({ snapshot: 'nightly' }, ctx)).toEqual({ uid: 'job-1' });
    expect(count()).toBe(1);
  });

  it('a snapshot with nothing recorded to check against is refused for good, with why', async () => {
    const { ctx, count } = setup({ ...recorded, hashKV: undefined });
    const outcome = await createVerifyJob.run({ snapshot: 'nightly' }, ctx).then(
      () => 'ok',
      (e: EffectError) => `${e.code} retryable=${String(e.retryable)}: ${e.message}`,
    );
    expect(outcome).toMatch(/^ERR_VERIFY_SNAPSHOT retryable=false: cannot verify: nothing was recorded/);
    expect(count()).toBe(0);
  });
});
