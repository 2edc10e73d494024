import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../../api/v1alpha1/index.ts';
import { newestUsable, unusable } from '../../../effects/kubernetes/resolve-recovery-snapshot.ts';

/** An EtcdSnapshot of `cluster`, Succeeded at `at` unless `o` says otherwise. */
const snap = (name: string, cluster: string, at: string, o: Partial<EtcdSnapshot['status']> = {}): EtcdSnapshot => ({
  apiVersion: 'etcd-operator.dev/v1alpha1',
  kind: 'EtcdSnapshot',
  metadata: { name, namespace: 'default' },
  spec: {
    clusterRef: { name: cluster },
    destination: { pvc: { claimName: 'backups' } },
    deletionPolicy: 'Delete',
    verify: false,
  },
  status: { phase: 'Succeeded', sha256: 'ab'.repeat(32), completionTime: at, revision: 10, ...o },
});

const failedVerification = {
  conditions: [
    {
      type: 'Verified',
      status: 'False' as const,
      reason: 'Mismatch',
      message: 'the restore has 9 keys, 10 were recorded',
      lastTransitionTime: '2026-11-27T04:00:00Z',
    },
  ],
};

describe('resolveRecoverySnapshot: which snapshot a recovery restores', () => {
  it('takes the newest Succeeded snapshot of the cluster, passing over others and failed verifications', () => {
    const all = [
      snap('old', 'demo', '2026-11-26T03:00:00Z'),
      snap('running', 'demo', '', { phase: 'Running', sha256: undefined }),
      snap('bad', 'demo', '2026-11-27T05:00:00Z', failedVerification),
      snap('theirs', 'other', '2026-11-27T06:00:00Z'),
      snap('nightly', 'demo', '2026-11-27T03:00:00Z'),
    ];
    expect(newestUsable(all, 'demo')?.metadata.name).toBe('nightly');
    expect(newestUsable(all, 'nobody')).toBeUndefined();
  });

  it('says why a snapshot cannot be restored', () => {
    expect(unusable(snap('nightly', 'demo', 'x'))).toBeNull();
    expect(unusable(snap('running', 'demo', '', { phase: 'Running' }))).toBe(
      'EtcdSnapshot running is Running, not Succeeded: only a snapshot stored and checked can be restored',
    );
    expect(unusable(snap('bad', 'demo', 'x', failedVerification))).toBe(
      'EtcdSnapshot bad failed its verification (Mismatch: the restore has 9 keys, 10 were recorded)',
    );
  });
});
