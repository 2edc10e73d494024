import { describe, expect, it } from 'vitest';
import { initialClusterContext, type ClusterContext } from '../../machines/cluster-decide.ts';
import { clusterKind } from '../../manager/kinds/cluster.ts';
import { clusterObserved } from '../../manager/observe.ts';
import { clusterStatus } from '../../manager/status.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'u1' };
const T0 = Date.parse('2026-11-27T12:00:00Z');
const statusOf = (c: Partial<ClusterContext>, to = 'steady') =>
  clusterStatus(
    undefined,
    { seq: 1, from: to, to, context: { ...initialClusterContext(ref), ...c }, generation: 1 },
    T0,
  );
const recovered = (s: ReturnType<typeof statusOf>) => s.conditions?.find((x) => x.type === 'Recovered');
const recovery = {
  requestID: 'r1',
  survivor: 'demo-0',
  survivorID: 'a0',
  applied: 120,
  revision: 57,
  lost: ['demo-1', 'demo-2'],
  deleted: [],
  deleting: null,
};

describe('manager: the Recovered condition and its Event', () => {
  it('is absent until a recovery is asked', () => {
    expect(recovered(statusOf({}))).toBeUndefined();
  });

  it('says what will be lost while a recovery runs, and what was once it is done, with one Event at the end', () => {
    const running = statusOf({ recovery }, 'recovering.awaitingForced');
    expect(recovered(running)).toMatchObject({
      status: 'False',
      reason: 'Recovering',
      message:
        "recovering from demo-0 (request r1): the data is demo-0's at revision 57 (raft applied index 120): a write the lost members applied beyond it, if any, is lost; every write demo-0 holds is kept, with its revisions",
    });
    expect(clusterKind.warning?.(undefined, running)).toBeUndefined();
    const message = 'recovered from demo-0 (request r1) ...';
    const done = statusOf({ recovered: { requestID: 'r1', result: 'recovered', message, at: T0 } });
    expect(recovered(done)).toMatchObject({ status: 'True', reason: 'Completed', message });
    expect(clusterKind.warning?.(running, done)).toEqual({
      type: 'Normal',
      reason: 'Completed',
      note: message,
      action: 'Recover',
    });
    expect(clusterKind.warning?.(done, done)).toBeUndefined();
  });

  it('a refusal is False with why, and a Warning once', () => {
    const why =
      'a quorum answers (3 of 3 voters healthy): recovery is for a quorum lost for good, and would drop members that hold data';
    const refused = statusOf({ recovered: { requestID: 'r2', result: 'refused', message: why, at: T0 } });
    expect(recovered(refused)).toMatchObject({
      status: 'False',
      reason: 'RecoveryRefused',
      message: `recovery request r2 refused, nothing was changed: ${why}`,
    });
    expect(clusterKind.warning?.(undefined, refused)).toMatchObject({ type: 'Warning', reason: 'RecoveryRefused' });
    expect(clusterKind.warning?.(refused, refused)).toBeUndefined();
  });

  it('status.recovery says which request was handled and how, and a machine that does not know keeps it and Recovered as they were', () => {
    const message = 'recovered from demo-0 (request r1) ...';
    const done = statusOf({ recovered: { requestID: 'r1', result: 'recovered', message, at: T0 } });
    expect(done.recovery).toEqual({ requestID: 'r1', result: 'Recovered', time: '2026-11-27T12:00:00Z' });
    // A manager that lost its journal: its machine has no outcome, the status it writes keeps both.
    const step = { seq: 1, from: 'steady', to: 'steady', context: initialClusterContext(ref), generation: 2 };
    const after = clusterStatus(done, step, T0 + 60_000);
    expect(after.recovery).toEqual(done.recovery);
    expect(recovered(after)).toMatchObject({ status: 'True', reason: 'Completed', message });
    expect(clusterKind.warning?.(done, after)).toBeUndefined();
    // What the machine is fed from it.
    const object = {
      metadata: { name: 'demo', namespace: 'default', uid: 'u1' },
      spec: { replicas: 3, version: '3.6.16', progressDeadlineSeconds: 600, recovery: { requestID: 'r1' } },
      status: after,
    };
    expect(clusterObserved(object as never, T0)).toMatchObject({
      recovery: { requestID: 'r1' },
      recoveryHandled: 'r1',
    });
  });
});
