import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { buildVerifyJob, verifyRefusal } from '../../effects/kubernetes/build-verify-job.ts';
import { jobObservation, parseVerdict } from '../../manager/observe-snapshot.ts';

const stored = (o: Partial<NonNullable<EtcdSnapshot['status']>> = {}): EtcdSnapshot =>
  ({
    metadata: { name: 'nightly', namespace: 'prod', uid: '0123456789abcdef' },
    spec: {
      clusterRef: { name: 'demo' },
      destination: { s3: { bucket: 'backups', forcePathStyle: true, credentialsSecretRef: { name: 'creds' } } },
      verify: true,
    },
    status: {
      phase: 'Succeeded',
      sha256: 'f'.repeat(64),
      revision: 120,
      etcdVersion: '3.6.16',
      hashKV: 3_000_000_001,
      compactRevision: -1,
      keys: 80,
      ...o,
    },
  }) as EtcdSnapshot;

const job = (status: V1Job['status']): V1Job => ({ metadata: { name: 'nightly-verify', uid: 'v1' }, status });
const pod = (status: V1Pod['status']): V1Pod => ({
  metadata: {
    ownerReferences: [{ uid: 'v1', kind: 'Job', name: 'nightly-verify', apiVersion: 'batch/v1' }],
    creationTimestamp: new Date('2026-01-01T00:00:00Z'),
  },
  status,
});
const agentEnded = (exitCode: number, message: string) =>
  pod({ containerStatuses: [{ name: 'agent', state: { terminated: { exitCode, message } } } as never] });

describe('verify Job: what it runs, and what it reports', () => {
  it('fetches the stored object against its sha256, restores it with the etcd that took it, starts it on loopback and checks it', () => {
    const spec = buildVerifyJob(stored(), 'op:1', { etcdImageRepository: 'registry/etcd' }).spec?.template.spec;
    expect(spec?.initContainers?.map((c) => [c.name, c.image, c.restartPolicy])).toEqual([
      ['fetch', 'op:1', undefined],
      ['restore', 'registry/etcd:v3.6.16', undefined],
      ['etcd', 'registry/etcd:v3.6.16', 'Always'],
    ]);
    expect(spec?.initContainers?.[0]?.args).toEqual([
      ...['agent', 'fetch-snapshot', '--s3-bucket=backups', '--s3-key=prod/demo/nightly-01234567.db'],
      ...['--s3-force-path-style', `--sha256=${'f'.repeat(64)}`, '--to=/verify/snapshot.db'],
    ]);
    // Only the fetch reads the store: the keys go to it, not to the agent that checks the etcd.
    expect(spec?.initContainers?.[0]?.env?.map((e) => e.name)).toEqual(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);
    expect(spec?.containers[0]?.env).toEqual([]);
    // Serves no client: it listens on the Pod's loopback only, and is a cluster of one of its own.
    const etcdArgs = spec?.initContainers?.[2]?.args ?? [];
    expect(etcdArgs.filter((a) => a.startsWith('--listen'))).toEqual([
      '--listen-client-urls=http://127.0.0.1:2379',
      '--listen-peer-urls=http://127.0.0.1:2380',
    ]);
    expect(etcdArgs).toContain('--initial-cluster=verify=http://127.0.0.1:2380');
    expect(spec?.containers[0]?.args).toEqual([
      ...['agent', 'verify-snapshot', '--endpoint=http://127.0.0.1:2379', '--revision=120'],
      ...['--hash-kv=3000000001', '--compact-revision=-1', '--keys=80'],
    ]);
    expect(spec?.volumes).toContainEqual({ name: 'verify', emptyDir: {} });
  });

  it('a snapshot with nothing recorded to check against cannot be verified, and says why', () => {
    expect(verifyRefusal(stored())).toBeNull();
    expect(verifyRefusal(stored({ hashKV: undefined }))).toMatch(/nothing was recorded/);
    expect(verifyRefusal(stored({ sha256: undefined }))).toMatch(/not stored and checked yet/);
  });

  it("a verify Job's success counts only with its agent's verdict; a verdict with differences is never verified", () => {
    const done = job({ succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
    expect(jobObservation(done, [], undefined, true)).toMatchObject({ succeeded: true, failed: null });
    expect(jobObservation(done, [], undefined, true)?.verdict).toBeUndefined();
    const verdict = { verified: true, checked: 'revision 120 (head 121), hashKV 3, 80 keys', differences: [] };
    expect(jobObservation(done, [agentEnded(0, JSON.stringify(verdict))], undefined, true)?.verdict).toEqual(verdict);
    expect(parseVerdict(JSON.stringify({ ...verdict, differences: ['80 keys, not 81'] }))).toMatchObject({
      verified: false,
    });
    expect(parseVerdict('{"verified":true}')).toMatch(/lacks verified, checked or differences/);
  });

  it("a verify Job whose fetch failed (the stored file changed) says so in the fetch container's words", () => {
    const failed = job({ failed: 3, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] });
    const message = 'fetch-snapshot failed: s3://backups/k has sha256 1f (10 bytes), not the ff it was stored with';
    const p = pod({
      initContainerStatuses: [
        { name: 'fetch', state: { terminated: { exitCode: 1, message } } } as never,
        { name: 'restore', state: { waiting: { reason: 'PodInitializing' } } } as never,
      ],
      containerStatuses: [{ name: 'agent', state: { waiting: { reason: 'PodInitializing' } } } as never],
    });
    expect(jobObservation(failed, [p], undefined, true)).toMatchObject({ failed: `fetch: ${message}` });
  });
});
