/** Reading a member's lost data off its Pod: the check-data init container's exit code 3. */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DATA_LOST_REASON, dataLostObserved } from '../../manager/data-check.ts';

const lost =
  "etcd data lost: /var/lib/etcd/data holds 0 WAL file(s), no member/snap/db, though etcd ran on this member's volume before; the member is not started empty, the operator replaces it with a new member while quorum holds";

/** A member Pod whose init container statuses are `statuses`. */
function pod(...statuses: Partial<V1ContainerStatus>[]): V1Pod {
  const full = statuses.map((s) => ({
    name: 'check-data',
    image: 'op',
    imageID: '',
    ready: false,
    restartCount: 0,
    ...s,
  }));
  return { metadata: { name: 'demo-0' }, status: { phase: 'Pending', initContainerStatuses: full } };
}

describe('data lost, as the Pod tells', () => {
  it('check-data ended with exit 3: the event carries its termination message', () => {
    const p = pod({ state: { terminated: { exitCode: 3, reason: 'Error', message: lost } } });
    expect(dataLostObserved(p, 42)).toEqual({ type: 'member.data.lost', at: 42, reason: lost });
  });

  it('check-data restarting after exit 3 (CrashLoopBackOff): the last run tells', () => {
    const p = pod({
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 3, reason: 'Error', message: lost } },
      restartCount: 2,
    });
    expect(dataLostObserved(p, 1)?.type).toBe('member.data.lost');
  });

  it('with no message, a fixed sentence; from a log tail, the line that says it', () => {
    expect(dataLostObserved(pod({ state: { terminated: { exitCode: 3, reason: 'Error' } } }), 1)).toMatchObject({
      reason: DATA_LOST_REASON,
    });
    const tail = `node: some warning\n${lost}\n`;
    expect(
      dataLostObserved(pod({ state: { terminated: { exitCode: 3, reason: 'Error', message: tail } } }), 1),
    ).toMatchObject({ reason: lost });
  });

  it("etcd's container died with raft's 'tocommit out of range' (restarted on an emptied volume): lost, not a restart", () => {
    const panic =
      '{"level":"panic","msg":"tocommit(2010) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?"}\n' +
      'panic: tocommit(2010) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?\n\ngoroutine 170 [running]:\n';
    const p: V1Pod = {
      metadata: { name: 'demo-0' },
      status: {
        phase: 'Running',
        containerStatuses: [
          {
            name: 'etcd',
            image: 'etcd',
            imageID: '',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 2, reason: 'Error', message: panic } },
          },
        ],
      },
    };
    expect(dataLostObserved(p, 7)).toEqual({
      type: 'member.data.lost',
      at: 7,
      reason: expect.stringMatching(
        /^etcd data lost: etcd exited because its raft log ends at index 0 while the cluster committed up to 2010/,
      ) as string,
    });
    const other = structuredClone(p);
    other.status!.containerStatuses![0]!.lastState = {
      terminated: { exitCode: 1, reason: 'Error', message: 'bind: address in use' },
    };
    expect(dataLostObserved(other, 7)).toBeNull();
  });

  it.each([
    ['no Pod', undefined],
    ['a Pod with no status yet', { metadata: { name: 'demo-0' } }],
    ['check-data passed', pod({ state: { terminated: { exitCode: 0, reason: 'Completed' } } })],
    [
      'check-data failed otherwise (an unreadable dir)',
      pod({ state: { terminated: { exitCode: 1, reason: 'Error' } } }),
    ],
    ['check-data running', pod({ state: { running: {} } })],
    [
      'another init container with exit 3',
      pod({ name: 'warm-up', state: { terminated: { exitCode: 3, reason: 'Error' } } }),
    ],
  ] as const)('%s: nothing lost', (_, p) => {
    expect(dataLostObserved(p, 1)).toBeNull();
  });
});
