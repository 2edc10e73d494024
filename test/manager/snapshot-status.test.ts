import { describe, expect, it } from 'vitest';
import { initialSnapshotContext } from '../../machines/snapshot-decide.ts';
import type { SnapshotReport } from '../../machines/types.ts';
import { snapshotStatus } from '../../manager/snapshot-status.ts';

const report: SnapshotReport = {
  location: 's3://backups/etcd/prod/demo/nightly-01234567.db',
  size: 4096,
  sha256: 'a'.repeat(64),
  revision: 7,
  etcdVersion: '3.6.16',
};
const complete = (r: SnapshotReport) => {
  const context = {
    ...initialSnapshotContext({ snapshot: { name: 'nightly', namespace: 'prod', uid: 'u', cluster: 'demo' } }),
    result: r,
  };
  const status = snapshotStatus(undefined, { path: 'succeeded', context, generation: 1 }, 0);
  return status.conditions?.find((c) => c.type === 'Complete');
};

describe('snapshot status: what the agent did of the uploads earlier attempts left', () => {
  it('a snapshot stored at the first attempt says only where', () => {
    expect(complete(report)?.message).toBe(`stored and read back whole at ${report.location}`);
  });

  it('says how many unfinished uploads it aborted', () => {
    expect(complete({ ...report, abortedUploads: 2 })?.message).toBe(
      `stored and read back whole at ${report.location}; 2 unfinished uploads that an earlier attempt left aborted`,
    );
  });

  it('says why it could not, the snapshot Complete all the same', () => {
    const c = complete({
      ...report,
      uploadsNotAborted: 'unfinished uploads under s3://backups/x not aborted: AccessDenied',
    });
    expect(c).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(c?.message).toMatch(/; unfinished uploads under s3:\/\/backups\/x not aborted: AccessDenied$/);
  });
});

describe('snapshot status: Verified', () => {
  const base = initialSnapshotContext({ snapshot: { name: 'nightly', namespace: 'prod', uid: 'u', cluster: 'demo' } });
  const verifiedOf = (c: Partial<typeof base>, path = 'succeeded') => {
    const status = snapshotStatus(undefined, { path, context: { ...base, result: report, ...c }, generation: 1 }, 0);
    return { status, condition: status.conditions?.find((x) => x.type === 'Verified') };
  };

  it('no Verified condition on a snapshot that does not ask for it', () => {
    expect(verifiedOf({}).condition).toBeUndefined();
  });

  it('Unknown while a verify Job runs; True with what was checked, and when', () => {
    expect(verifiedOf({ verify: true }, 'verifying.running').condition).toMatchObject({
      status: 'Unknown',
      reason: 'Verifying',
    });
    const checked = 'revision 7 (head 7), hashKV 42, 3 keys';
    const { status, condition } = verifiedOf({
      verify: true,
      verification: { verified: true, checked, differences: [], at: Date.parse('2026-01-01T03:05:00Z') },
    });
    expect(condition).toMatchObject({ status: 'True', reason: 'Matched', message: `restored and checked: ${checked}` });
    expect(status.verifiedTime).toBe('2026-01-01T03:05:00.000Z');
  });

  it('False with what differed, or NotChecked with why the Job could not check it', () => {
    const differences = ['3 keys at revision 7, not the recorded 4', 'hashKV at revision 7 is 1, not the recorded 2'];
    expect(
      verifiedOf({ verify: true, verification: { verified: false, checked: 'x', differences, at: 0 } }).condition,
    ).toMatchObject({ status: 'False', reason: 'Differs', message: differences.join('; ') });
    const why = ['the verify Job could not check it: fetch: sha256 differs'];
    const { status, condition } = verifiedOf({
      verify: true,
      verification: { verified: false, checked: 'nothing', differences: why, at: 0 },
    });
    expect(condition).toMatchObject({ status: 'False', reason: 'NotChecked', message: why[0] });
    expect(status.verifiedTime).toBeUndefined();
  });
});
