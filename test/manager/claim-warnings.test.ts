/** A Pending claim says why in its newest Warning Event, read only while it is Pending. */
import type { CoreV1Event, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ClaimWarnings, newestWarning, type ClaimWarningReader } from '../../manager/claim-warnings.ts';

const event = (reason: string, message: string, last: string, type = 'Warning'): CoreV1Event => ({
  metadata: { name: `data-demo-0.${reason}` },
  involvedObject: { kind: 'PersistentVolumeClaim', name: 'data-demo-0', uid: 'c0' },
  type,
  reason,
  message,
  lastTimestamp: new Date(last),
});
const notFound = event('ProvisioningFailed', 'storageclass.storage.k8s.io "nope" not found', '2026-11-21T12:00:05Z');
const older = event('ProvisioningFailed', 'an older failure', '2026-11-21T12:00:01Z');
const normal = event('WaitForFirstConsumer', 'waiting for first consumer', '2026-11-21T12:00:09Z', 'Normal');

const claim = (phase: string): V1PersistentVolumeClaim => ({
  metadata: { name: 'data-demo-0', namespace: 'default', uid: 'c0' },
  spec: { storageClassName: 'nope' },
  status: { phase },
});

/** A reader over `events` that counts its reads, or fails while `failing`. */
function world(events: CoreV1Event[]) {
  const reads = { count: 0, failing: false };
  const read: ClaimWarningReader = (namespace, uid) => {
    reads.count++;
    if (reads.failing) return Promise.reject(new Error('HTTP 403'));
    expect([namespace, uid]).toEqual(['default', 'c0']);
    return Promise.resolve(events);
  };
  return { read, reads };
}

describe('the Warnings on a Pending claim', () => {
  it('the newest Warning tells, whatever order they are listed in; Normal Events do not', () => {
    expect(newestWarning([older, notFound, normal])).toEqual({
      reason: 'ProvisioningFailed',
      message: 'storageclass.storage.k8s.io "nope" not found',
    });
    expect(newestWarning([notFound, older])?.message).toContain('not found');
    expect(newestWarning([normal])).toBeUndefined();
    expect(newestWarning([])).toBeUndefined();
  });

  it('are read while the claim is Pending, a read standing 10 s, and looked at again then', async () => {
    let now = 0;
    const events = [older];
    const { read, reads } = world(events);
    const w = new ClaimWarnings(read, { now: () => now });
    expect(await w.check(claim('Pending'))).toEqual({
      warning: { reason: 'ProvisioningFailed', message: 'an older failure' },
      againMs: 10_000,
    });
    events.push(notFound);
    now += 5_000;
    expect((await w.check(claim('Pending'))).warning?.message).toBe('an older failure');
    expect(reads.count).toBe(1);
    now += 5_000;
    expect((await w.check(claim('Pending'))).warning?.message).toBe('storageclass.storage.k8s.io "nope" not found');
    expect(reads.count).toBe(2);
  });

  it('asks nothing of a bound claim, a claim being deleted, or none', async () => {
    const { read, reads } = world([notFound]);
    const w = new ClaimWarnings(read);
    expect(await w.check(claim('Bound'))).toEqual({});
    expect(
      await w.check({ ...claim('Pending'), metadata: { ...claim('Pending').metadata, deletionTimestamp: new Date() } }),
    ).toEqual({});
    expect(await w.check(undefined)).toEqual({});
    expect(reads.count).toBe(0);
  });

  it('a read that fails says nothing new (no right to list Events, the API server away)', async () => {
    let now = 0;
    const { read, reads } = world([notFound]);
    const w = new ClaimWarnings(read, { now: () => now });
    reads.failing = true;
    expect(await w.check(claim('Pending'))).toEqual({ againMs: 10_000 });
    reads.failing = false;
    expect((await w.check(claim('Pending'))).warning?.reason).toBe('ProvisioningFailed');
    now += 10_000;
    reads.failing = true;
    expect((await w.check(claim('Pending'))).warning?.reason).toBe('ProvisioningFailed');
  });
});
