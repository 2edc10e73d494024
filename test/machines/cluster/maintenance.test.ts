import { beforeEach, describe, expect, it } from 'vitest';
import { clusterMachine } from '../../../machines/cluster.ts';
import { SPACE_RECHECK_MS } from '../../../machines/cluster/maintenance/index.ts';
import { describeCluster } from '../../../machines/describe.ts';
import { peerURL } from '../../../machines/policy.ts';
import type { ClusterEvent, DefragSpec, EtcdObservation, MaintenanceSpec } from '../../../machines/types.ts';
import { Driver, type Intent, play, voters } from '../harness.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'uid-1' };
const id = (n: number): string => `a${n}`;
const MiB = 2 ** 20;
const QUOTA = 16 * MiB;

let clock = 0;
beforeEach(() => {
  clock = Date.UTC(2026, 10, 24, 2, 50);
});
const now = (): number => (clock += 10);
const tick = (ms: number): ClusterEvent => ({ type: 'timer.tick', at: (clock += ms) });
const ok = (kind: string, result?: Record<string, unknown>): ClusterEvent =>
  ({ type: `effect.${kind}.succeeded`, at: now(), result }) as ClusterEvent;
const failed = (kind: string, code: string, message = code): ClusterEvent =>
  ({ type: `effect.${kind}.failed`, at: now(), error: { code, message } }) as ClusterEvent;

const defragSpec = (o: Partial<DefragSpec>): DefragSpec => ({
  schedule: null,
  timeZone: null,
  fragmentedBytes: null,
  fragmentedPercent: null,
  ...o,
});
const spec = (maintenance: MaintenanceSpec, replicas = 3): ClusterEvent => ({
  type: 'k8s.cluster.updated',
  at: now(),
  spec: { replicas, version: '3.6.16' },
  progressDeadlineSeconds: 600,
  maintenance,
});
const members = (n = 3): ClusterEvent => ({
  type: 'k8s.members.listed',
  at: now(),
  members: voters(Array<string>(n).fill('3.6.16')),
});

/** etcd with voters 0..2 led by `leader`: sizes in MiB [dbSize, inUse] by ordinal, alarms by ordinal. */
function etcd(
  leader: number,
  o: { unhealthy?: number[]; sizes?: Record<number, [number, number]>; noSpace?: number[] } = {},
): ClusterEvent {
  const up = [0, 1, 2].filter((n) => !o.unhealthy?.includes(n));
  const observation: EtcdObservation = {
    clusterID: 'c1',
    members: [0, 1, 2].map((n) => ({
      id: id(n),
      name: `demo-${n}`,
      peerURL: peerURL(ref, `demo-${n}`),
      learner: false,
    })),
    healthy: up.map(id),
    leader: id(leader),
    versions: Object.fromEntries(up.map((n) => [id(n), '3.6.16'])),
    sizes: Object.fromEntries(
      up.map((n) => {
        const [size, inUse] = o.sizes?.[n] ?? [20, 19];
        return [id(n), { dbSize: size * MiB, dbSizeInUse: inUse * MiB }];
      }),
    ),
    ...(o.noSpace ? { alarms: o.noSpace.map((n) => ({ memberID: id(n), alarm: 'NOSPACE' })) } : {}),
  };
  return { type: 'etcd.members.listed', at: now(), etcd: observation };
}

/** A steady 3-member cluster led by demo-0, adopted as a manager without a journal would. */
function steady(maintenance: MaintenanceSpec): Driver<typeof clusterMachine> {
  const d = new Driver(clusterMachine, { cluster: ref });
  play(d, [
    [spec(maintenance), 'pending'],
    [members(), 'observing'],
    [etcd(0), 'updatingBudget.running'],
    [ok('setDisruptionBudget', { minAvailable: 2 }), 'steady'],
  ]);
  return d;
}

const defrag = (n: number): Intent => ({ type: 'defragment', params: { member: `demo-${n}`, memberID: id(n) } });
const freed = (mib: number): ClusterEvent => ok('defragment', { freed: mib * MiB });
const moveLeader = (from: number, to: number): Intent => ({
  type: 'moveLeader',
  params: { member: `demo-${from}`, memberID: id(from), toID: id(to) },
});
const say = (d: Driver<typeof clusterMachine>): string => describeCluster(d.state, d.context).message;
/** The context as the journal compares it: without the clock. */
const persisted = (d: Driver<typeof clusterMachine>): string => JSON.stringify({ ...d.context, now: 0 });

describe('cluster machine: defragmentation', () => {
  const nightly = { defrag: defragSpec({ schedule: '0 3 * * *' }), quotaBytes: null };

  it('on schedule: followers by ordinal, the leader last with leadership moved first, each answering again before the next', () => {
    const d = steady(nightly);
    expect(say(d)).toBe('3 voters, all healthy; leader demo-0; next defragmentation at 2026-11-24T03:00:00Z');
    play(d, [[tick(9 * 60_000), 'steady', []]]);
    // 03:00 passes: the run starts at once, with the first follower.
    play(d, [[tick(60_000), 'defragmenting.running.running', [defrag(1)]]]);
    expect(d.context.defragSchedule?.handledThrough).toBe(Date.UTC(2026, 10, 24, 3));
    expect(say(d)).toBe(
      'defragmenting demo-1 (1 of 3), scheduled for 2026-11-24T03:00:00Z: its database is rebuilt; its reads and writes wait meanwhile',
    );
    play(d, [
      [freed(60), 'defragmenting.awaitingMember', []],
      [etcd(0), 'defragmenting.running.running', [defrag(2)]],
      [freed(50), 'defragmenting.awaitingMember', []],
      // The leader's turn: leadership goes to a member already done, and only then is it rebuilt.
      [etcd(0), 'defragmenting.movingLeader.running', [moveLeader(0, 1)]],
    ]);
    expect(say(d)).toMatch(
      /^defragmenting demo-0 \(3 of 3\), scheduled for .*: moving leadership to another voter first, so writes do not stall while the leader is rebuilt; done: demo-1 freed 60 MiB, demo-2 freed 50 MiB$/,
    );
    play(d, [
      [ok('moveLeader', { leader: id(1) }), 'defragmenting.awaitingLeader', []],
      [etcd(0), 'defragmenting.awaitingLeader', []],
      [etcd(1), 'defragmenting.running.running', [defrag(0)]],
      [freed(70), 'defragmenting.awaitingMember', []],
      [etcd(1), 'observing', []],
      [etcd(1), 'steady', []],
    ]);
    expect(d.context.lastDefrag?.done).toEqual([
      { member: 'demo-1', freed: 60 * MiB },
      { member: 'demo-2', freed: 50 * MiB },
      { member: 'demo-0', freed: 70 * MiB },
    ]);
    // That fire time ran; the next is tomorrow's.
    play(d, [[tick(30 * 60_000), 'steady', []]]);
    expect(say(d)).toBe('3 voters, all healthy; leader demo-1; next defragmentation at 2026-11-25T03:00:00Z');
  });

  it('never starts while a voter is down; a member down mid-run holds the next turn', () => {
    const d = steady(nightly);
    play(d, [
      [etcd(0, { unhealthy: [2] }), 'steady'],
      [tick(11 * 60_000), 'steady', []],
    ]);
    expect(say(d)).toBe(
      '3 voters, 2 healthy: a quorum; leader demo-0; defragmentation due (scheduled for 2026-11-24T03:00:00Z): it starts once every voter is healthy',
    );
    play(d, [
      [etcd(0), 'defragmenting.running.running', [defrag(1)]],
      [freed(10), 'defragmenting.awaitingMember', []],
      [etcd(0, { unhealthy: [2] }), 'defragmenting.awaitingHealth', []],
    ]);
    expect(say(d)).toMatch(/^defragmenting demo-2 \(2 of 3\), .*: waiting until every voter is healthy and in sync/);
    play(d, [[etcd(0), 'defragmenting.running.running', [defrag(2)]]]);
  });

  it('a spec edit while a run waits for health goes first; the run is dropped', () => {
    const d = steady(nightly);
    play(d, [
      [tick(11 * 60_000), 'defragmenting.running.running', [defrag(1)]],
      [freed(10), 'defragmenting.awaitingMember', []],
      [etcd(0, { unhealthy: [2] }), 'defragmenting.awaitingHealth', []],
      [
        spec(nightly, 4),
        'updatingBudget.running',
        [{ type: 'setDisruptionBudget', params: { cluster: 'demo', minAvailable: 3 } }],
      ],
    ]);
    expect(d.context.defrag).toBeNull();
    expect(d.context.target?.replicas).toBe(4);
  });

  it('a spec edit while a member is rebuilt waits until the run ends', () => {
    const d = steady(nightly);
    play(d, [
      [tick(11 * 60_000), 'defragmenting.running.running', [defrag(1)]],
      [spec(nightly, 4), 'defragmenting.running.running', []],
      [freed(10), 'defragmenting.awaitingMember', []],
      [etcd(0), 'defragmenting.running.running', [defrag(2)]],
    ]);
    expect(d.context.target?.replicas).toBe(3);
  });

  it('past a threshold: only the members over it, once; sizes that move under it change nothing', () => {
    const d = steady({ defrag: defragSpec({ fragmentedBytes: 64 * MiB, fragmentedPercent: 50 }), quotaBytes: null });
    const before = persisted(d);
    // Writes move every member's sizes, all under the threshold: nothing to journal.
    play(d, [[etcd(0, { sizes: { 0: [30, 29], 1: [31, 20], 2: [200, 150] } }), 'steady', []]]);
    expect(persisted(d)).toBe(before);
    expect(d.context.fragmented).toBeUndefined();
    // demo-2: 100 MiB of 180 fragmented (over 64 MiB and 50%); demo-1: 70 of 150 (under 50%).
    play(d, [[etcd(0, { sizes: { 1: [150, 80], 2: [180, 80] } }), 'defragmenting.running.running', [defrag(2)]]]);
    expect(d.context.fragmented).toEqual({ [id(2)]: 100 });
    expect(say(d)).toBe(
      'defragmenting demo-2 (1 of 1), over the threshold with 100 MiB fragmented: its database is rebuilt; its reads and writes wait meanwhile',
    );
    play(d, [
      [freed(100), 'defragmenting.awaitingMember', []],
      [etcd(0, { sizes: { 2: [80, 80] } }), 'observing', []],
      [etcd(0, { sizes: { 2: [80, 80] } }), 'steady', []],
    ]);
    // Over it again within five minutes of the last run: it waits out the cool-down.
    play(d, [
      [etcd(0, { sizes: { 2: [180, 80] } }), 'steady', []],
      [tick(5 * 60_000), 'defragmenting.running.running', [defrag(2)]],
    ]);
  });

  it('past a threshold: a member found over it during the run (its sizes late after a compaction) joins the same run', () => {
    const d = steady({ defrag: defragSpec({ fragmentedBytes: 64 * MiB }), quotaBytes: null });
    play(d, [
      [etcd(0, { sizes: { 2: [180, 80] } }), 'defragmenting.running.running', [defrag(2)]],
      [freed(100), 'defragmenting.awaitingMember', []],
      // The fresh probe after demo-2 shows demo-1 over it too: its turn comes in this run.
      [etcd(0, { sizes: { 1: [170, 80], 2: [80, 80] } }), 'defragmenting.running.running', [defrag(1)]],
    ]);
    expect(d.context.defrag).toMatchObject({ total: 2, remaining: ['demo-1'] });
    play(d, [
      [freed(90), 'defragmenting.awaitingMember', []],
      [etcd(0, { sizes: { 1: [80, 80], 2: [80, 80] } }), 'observing', []],
    ]);
    expect(d.context.lastDefrag?.done.map((x) => x.member)).toEqual(['demo-2', 'demo-1']);
  });

  it('a schedule the API server let through but cron cannot read is said, and never runs', () => {
    const d = steady({ defrag: defragSpec({ schedule: '61 * * * *' }), quotaBytes: null });
    play(d, [[tick(24 * 3600_000), 'steady', []]]);
    expect(say(d)).toBe(
      '3 voters, all healthy; leader demo-0; spec.maintenance.defrag.schedule cannot be read (schedule "61 * * * *": minute "61" is out of range 0-59): no scheduled defragmentation',
    );
  });

  it('resumes a run after a restart with the members it had left, without asking again for the one done', () => {
    const d = steady(nightly);
    play(d, [
      [tick(11 * 60_000), 'defragmenting.running.running', [defrag(1)]],
      [freed(10), 'defragmenting.awaitingMember', []],
    ]);
    d.restart();
    play(d, [[etcd(0), 'defragmenting.running.running', [defrag(2)]]]);
  });
});

describe('cluster machine: NOSPACE', () => {
  const small = { defrag: null, quotaBytes: QUOTA };
  const compact: Intent = { type: 'compact', params: { reason: 'NOSPACE' } };
  const disarm: Intent = { type: 'disarmAlarm', params: { quotaBytes: QUOTA, limitBytes: Math.floor(QUOTA * 0.8) } };
  const compacted = (inUseMiB: number): ClusterEvent =>
    ok('compact', { revision: 4242, member: 'demo-1', dbSize: 17 * MiB, dbSizeInUse: inUseMiB * MiB });

  it('recovers without the user: compact, defragment every member one at a time (leader last), disarm', () => {
    const d = steady(small);
    play(d, [[etcd(0, { noSpace: [1] }), 'recoveringSpace.compacting.running', [compact]]]);
    expect(describeCluster(d.state, d.context)).toEqual({
      step: 'RecoveringSpace',
      message:
        "etcd raised its NOSPACE alarm: the database reached its quota of 16 MiB (spec.options.quotaBackendBytes) and every write is refused. Compacting the history to the current revision, as etcd's maintenance guide says",
    });
    play(d, [
      [compacted(1), 'recoveringSpace.defragmenting.running.running', [defrag(1)]],
      [freed(15), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(0, { noSpace: [1] }), 'recoveringSpace.defragmenting.running.running', [defrag(2)]],
      [freed(15), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(0, { noSpace: [1] }), 'recoveringSpace.defragmenting.movingLeader.running', [moveLeader(0, 1)]],
      [ok('moveLeader'), 'recoveringSpace.defragmenting.awaitingLeader', []],
      [etcd(2, { noSpace: [1] }), 'recoveringSpace.defragmenting.running.running', [defrag(0)]],
      [freed(15), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(2, { noSpace: [1] }), 'recoveringSpace.disarming.running', [disarm]],
    ]);
    expect(say(d)).toMatch(
      /^etcd raised its NOSPACE alarm: .*; compacted to revision 4242, 1 MiB in use, and every member defragmented: disarming the alarm$/,
    );
    play(d, [
      [ok('disarmAlarm', { disarmed: 1 }), 'observing', []],
      [etcd(2), 'steady', []],
    ]);
    expect(d.context.space).toMatchObject({ outcome: 'disarmed', revision: 4242, inUse: MiB });
  });

  it('cannot free enough: says what the user must do, defragments nothing and does not loop; tries again later or when the quota changes', () => {
    const d = steady(small);
    play(d, [
      [etcd(0, { noSpace: [0] }), 'recoveringSpace.compacting.running', [compact]],
      [compacted(15.5), 'outOfSpace', []],
    ]);
    expect(describeCluster(d.state, d.context)).toEqual({
      step: 'OutOfSpace',
      message: expect.stringMatching(
        /^etcd raised its NOSPACE alarm: the database reached its quota of 16 MiB \(spec\.options\.quotaBackendBytes\) and every write is refused; the operator cannot free enough: after compacting to revision 4242, 15\.5 MiB of data is in use, more than the 12\.8 MiB \(80% of the quota\) it must be under\. Raise spec\.options\.quotaBackendBytes .* or delete data .*; tried again at 2026-11-24T\d\d:\d\d:\d\dZ or when the quota changes$/,
      ) as string,
    });
    // Probes meanwhile ask for nothing.
    play(d, [
      [etcd(0, { noSpace: [0] }), 'outOfSpace', []],
      [tick(SPACE_RECHECK_MS - 60_000), 'outOfSpace', []],
      [tick(60_000), 'recoveringSpace.compacting.running', [compact]],
      [compacted(15.5), 'outOfSpace', []],
      // The user raises the quota: tried again at once.
      [spec({ defrag: null, quotaBytes: 64 * MiB }), 'recoveringSpace.compacting.running', [compact]],
      [compacted(15.5), 'recoveringSpace.defragmenting.running.running', [defrag(1)]],
    ]);
  });

  it('a database still over the limit after defragmenting: one more pass over every member, then the verdict', () => {
    const d = steady(small);
    const notFreed = 'databases still over 12.8 MiB of the 16.0 MiB quota: demo-2 14.0 MiB';
    play(d, [
      [etcd(0, { noSpace: [0] }), 'recoveringSpace.compacting.running', [compact]],
      [compacted(1), 'recoveringSpace.defragmenting.running.running', [defrag(1)]],
      [freed(15), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(0, { noSpace: [0] }), 'recoveringSpace.defragmenting.running.running', [defrag(2)]],
      [freed(1), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(0, { noSpace: [0] }), 'recoveringSpace.defragmenting.movingLeader.running', [moveLeader(0, 1)]],
      [ok('moveLeader'), 'recoveringSpace.defragmenting.awaitingLeader', []],
      [etcd(1, { noSpace: [0] }), 'recoveringSpace.defragmenting.running.running', [defrag(0)]],
      [freed(15), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(1, { noSpace: [0] }), 'recoveringSpace.disarming.running', [disarm]],
      // demo-2 was rebuilt before its own compaction finished: every member again, leader last.
      [failed('disarmAlarm', 'ERR_SPACE_NOT_FREED', notFreed), 'recoveringSpace.compacting.running', [compact]],
      [compacted(1), 'recoveringSpace.defragmenting.running.running', [defrag(0)]],
    ]);
    expect(say(d)).toMatch(
      /\(a second pass: a database was still over the limit after the first\); defragmenting demo-0 \(1 of 3\)/,
    );
    play(d, [
      [freed(0), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(1, { noSpace: [0] }), 'recoveringSpace.defragmenting.running.running', [defrag(2)]],
      [freed(1), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(1, { noSpace: [0] }), 'recoveringSpace.defragmenting.movingLeader.running', [moveLeader(1, 0)]],
      [ok('moveLeader'), 'recoveringSpace.defragmenting.awaitingLeader', []],
      [etcd(0, { noSpace: [0] }), 'recoveringSpace.defragmenting.running.running', [defrag(1)]],
      [freed(0), 'recoveringSpace.defragmenting.awaitingMember', []],
      [etcd(0, { noSpace: [0] }), 'recoveringSpace.disarming.running', [disarm]],
      [failed('disarmAlarm', 'ERR_SPACE_NOT_FREED', notFreed), 'outOfSpace', []],
    ]);
    expect(say(d)).toContain(`the operator cannot free enough: ${notFreed}.`);
  });

  it('comes before a defragmentation run in flight, and takes over its members', () => {
    const d = steady({ defrag: defragSpec({ schedule: '0 3 * * *' }), quotaBytes: QUOTA });
    play(d, [
      [tick(11 * 60_000), 'defragmenting.running.running', [defrag(1)]],
      [freed(1), 'defragmenting.awaitingMember', []],
      [etcd(0, { noSpace: [1] }), 'recoveringSpace.compacting.running', [compact]],
    ]);
    expect(d.context.defrag).toBeNull();
    play(d, [[compacted(1), 'recoveringSpace.defragmenting.running.running', [defrag(1)]]]);
  });
});
