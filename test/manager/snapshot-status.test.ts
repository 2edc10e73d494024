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
