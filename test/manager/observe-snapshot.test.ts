import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { EtcdSnapshot } from '../../api/v1alpha1/index.ts';
import { buildSnapshotDeleteJob, buildSnapshotJob, storedAt } from '../../effects/kubernetes/build-snapshot-job.ts';
import {
  candidates,
  jobObservation,
  parseReport,
  snapshotClusterObserved,
  snapshotObserved,
} from '../../manager/observe-snapshot.ts';
import type { EtcdObservation } from '../../machines/types.ts';

const snapshot = (destination: EtcdSnapshot['spec']['destination']): EtcdSnapshot =>
  ({
    metadata: { name: 'nightly', namespace: 'prod', uid: '0123456789abcdef' },
    spec: { clusterRef: { name: 'demo' }, destination },
  }) as EtcdSnapshot;
const toS3 = snapshot({
  s3: {
    bucket: 'backups',
    keyPrefix: 'etcd/',
    endpoint: 'http://s3.storage.svc:7070',
    forcePathStyle: true,
    credentialsSecretRef: { name: 'creds', accessKeyIDKey: 'id', secretAccessKeyKey: 'secret' },
  },
});
const toPVC = snapshot({ pvc: { claimName: 'backups', subPath: 'etcd/' } });

const member = (id: string, name: string, learner = false) => ({ id, name, peerURL: `http://${name}:2380`, learner });
const probe = (o: Partial<EtcdObservation>): EtcdObservation => ({
  clusterID: 'c1',
  members: [member('a', 'demo-0'), member('b', 'demo-1'), member('c', 'demo-2'), member('d', 'demo-3', true)],
  healthy: ['a', 'b', 'c', 'd'],
  leader: 'a',
  ...o,
});

describe('snapshot observations', () => {
  it('a snapshot is taken from healthy voters, followers first, never a learner; none without a healthy leader', () => {
    expect(candidates(probe({}))).toEqual(['demo-1', 'demo-2', 'demo-0']);
    expect(candidates(probe({ healthy: ['a', 'c'] }))).toEqual(['demo-2', 'demo-0']);
    expect(candidates(probe({ leader: null }))).toEqual([]);
    expect(candidates(probe({ healthy: ['b', 'c'] }))).toEqual([]);
    expect(candidates(null)).toEqual([]);
  });

  it('the cluster as the snapshot machine sees it: not probed yet is unknown, not empty', () => {
    const cluster = { metadata: { uid: 'u' }, spec: { replicas: 0 } } as never;
    expect(snapshotClusterObserved(cluster, undefined, 1)).toMatchObject({
      cluster: { exists: true, dormant: true, candidates: null },
    });
    expect(snapshotClusterObserved(undefined, undefined, 1)).toMatchObject({ cluster: { exists: false } });
  });

  it("the clusters restoring from a snapshot are read from their finalizers; a gone one's hold is stale", () => {
    const held = {
      ...toPVC,
      metadata: {
        ...toPVC.metadata,
        deletionTimestamp: new Date(0),
        finalizers: [
          'etcd-operator.dev/delete-stored-snapshot',
          'restoring.etcd-operator.dev/demo',
          'restoring.etcd-operator.dev/old',
        ],
      },
    } as EtcdSnapshot;
    expect(snapshotObserved(held, 1, (c) => c === 'demo')).toMatchObject({
      deleting: true,
      finalizer: true,
      heldBy: ['demo'],
      staleHolds: ['old'],
    });
    expect(snapshotObserved(toPVC, 1)).toMatchObject({ heldBy: [], staleHolds: [] });
  });

  it('stores each snapshot at a key of its own, and mounts the claim for a PVC', () => {
    expect(storedAt(toS3).location).toBe('s3://backups/etcd/prod/demo/nightly-01234567.db');
    expect(storedAt(toPVC).location).toBe('pvc://backups/etcd/prod-demo-nightly-01234567.db');
    const job = buildSnapshotJob(toS3, 'demo-1', 'ghcr.io/x/etcd-operator:1');
    const pod = job.spec?.template.spec;
    expect(pod?.containers[0]?.args).toEqual([
      'agent',
      'snapshot',
      '--endpoint=http://demo-1.demo.prod.svc:2379',
      '--s3-bucket=backups',
      '--s3-key=etcd/prod/demo/nightly-01234567.db',
      '--s3-endpoint=http://s3.storage.svc:7070',
      '--s3-force-path-style',
      '--timeout=3600',
      '--sweep-older-than=7200',
    ]);
    // The keys come from the user's Secret into the Pod; the manager never reads them.
    expect(pod?.containers[0]?.env).toEqual([
      { name: 'AWS_ACCESS_KEY_ID', valueFrom: { secretKeyRef: { name: 'creds', key: 'id' } } },
      { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 'creds', key: 'secret' } } },
    ]);
    expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'EtcdSnapshot', uid: '0123456789abcdef' });
    // Not labelled with the cluster: the Services and the scale selector must not take it for a member.
    expect(Object.keys(pod ? (job.spec?.template.metadata?.labels ?? {}) : {})).not.toContain(
      'etcd-operator.dev/cluster',
    );
    const del = buildSnapshotDeleteJob(toPVC, 'img');
    expect(del.spec?.template.spec?.containers[0]?.args).toEqual([
      'agent',
      'delete-snapshot',
      '--file=/snapshots/etcd/prod-demo-nightly-01234567.db',
    ]);
    expect(del.spec?.template.spec?.volumes).toEqual([
      { name: 'snapshots', persistentVolumeClaim: { claimName: 'backups' } },
    ]);
  });

  it('an endpoint signed by a private CA: the caBundle is mounted and Node trusts it', () => {
    const s = snapshot({
      s3: {
        bucket: 'b',
        forcePathStyle: false,
        credentialsSecretRef: { name: 'creds', accessKeyIDKey: 'id', secretAccessKeyKey: 'secret' },
        caBundle: { configMapName: 'corp-ca', key: 'root.pem' },
      },
    });
    const pod = buildSnapshotJob(s, 'demo-0', 'img').spec?.template.spec;
    expect(pod?.containers[0]?.env).toContainEqual({
      name: 'NODE_EXTRA_CA_CERTS',
      value: '/etc/etcd-operator/s3-ca/root.pem',
    });
    expect(pod?.containers[0]?.volumeMounts).toEqual([
      { name: 's3-ca', mountPath: '/etc/etcd-operator/s3-ca', readOnly: true },
    ]);
    expect(pod?.volumes).toEqual([
      { name: 's3-ca', configMap: { name: 'corp-ca', items: [{ key: 'root.pem', path: 'root.pem' }] } },
    ]);
  });

  const job = (status: V1Job['status'], deleting = false): V1Job => ({
    metadata: { name: 'nightly-snapshot', uid: 'j1', ...(deleting ? { deletionTimestamp: new Date() } : {}) },
    status,
  });
  const pod = (exitCode: number, message: string, created: string): V1Pod => ({
    metadata: {
      ownerReferences: [{ uid: 'j1', kind: 'Job', name: 'nightly-snapshot', apiVersion: 'batch/v1' }],
      creationTimestamp: new Date(created),
    },
    status: { containerStatuses: [{ name: 'agent', state: { terminated: { exitCode, message } } } as never] },
  });
  const report = JSON.stringify({
    location: '/x',
    size: 10,
    sha256: 'f'.repeat(64),
    revision: 7,
    etcdVersion: '3.6.16',
  });

  it('a Job succeeded counts only with the report its Pod left; the location is where the snapshot is meant to be', () => {
    const done = job({ succeeded: 1, conditions: [{ type: 'Complete', status: 'True' }] });
    expect(jobObservation(done, [], toS3)).toMatchObject({ succeeded: true, failed: null });
    expect(jobObservation(done, [], toS3)?.report).toBeUndefined();
    expect(jobObservation(done, [pod(0, report, '2026-01-01T00:00:00Z')], toS3)?.report).toEqual({
      location: 's3://backups/etcd/prod/demo/nightly-01234567.db',
      size: 10,
      sha256: 'f'.repeat(64),
      revision: 7,
      etcdVersion: '3.6.16',
    });
    expect(jobObservation(done, [pod(0, 'not json', '2026-01-01T00:00:00Z')], toS3)).toMatchObject({
      succeeded: false,
      failed: expect.stringContaining('not JSON') as string,
    });
    // The delete Job reports nothing the machine needs.
    expect(jobObservation(done, [], undefined)).toMatchObject({ succeeded: true, failed: null });
  });

  it("a Job failed for good says why with its last Pod's message", () => {
    const failed = job({
      failed: 3,
      conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }],
    });
    const pods = [
      pod(1, 'snapshot failed: second', '2026-01-01T00:02:00Z'),
      pod(1, 'snapshot failed: first', '2026-01-01T00:01:00Z'),
    ];
    expect(jobObservation(failed, pods, toS3)).toMatchObject({ failed: 'snapshot failed: second', active: false });
    expect(jobObservation(failed, [], toS3)).toMatchObject({ failed: 'BackoffLimitExceeded' });
    expect(jobObservation(job({ active: 1 }), [], toS3)).toMatchObject({
      active: true,
      succeeded: false,
      failed: null,
    });
    expect(jobObservation(undefined, [], toS3)).toBeNull();
  });

  it('keeps what the agent says of the uploads earlier attempts left', () => {
    const r = { size: 1, sha256: 'a'.repeat(64), revision: 2, etcdVersion: '3.6.16' };
    expect(parseReport(JSON.stringify({ ...r, abortedUploads: 2 }), 'x')).toEqual({
      location: 'x',
      ...r,
      abortedUploads: 2,
    });
    expect(parseReport(JSON.stringify({ ...r, abortedUploads: 0 }), 'x')).toEqual({ location: 'x', ...r });
    expect(parseReport(JSON.stringify({ ...r, uploadsNotAborted: 'AccessDenied' }), 'x')).toMatchObject({
      uploadsNotAborted: 'AccessDenied',
    });
  });

  it('refuses a report without what a restore needs', () => {
    expect(parseReport('{"size":0}', 'x')).toMatch(/lacks size, sha256/);
  });
});
