import { describe, expect, it } from 'vitest';
import type { EtcdClusterStatus } from '../../api/v1alpha1/index.ts';
import { clusterMachine } from '../../machines/cluster.ts';
import { initialClusterContext } from '../../machines/cluster-decide.ts';
import { peerURL } from '../../machines/policy.ts';
import type { MemberState } from '../../machines/member-state.ts';
import type { ClusterEvent, MemberObservation } from '../../machines/types.ts';
import { clusterStatus } from '../../manager/status.ts';
import { Driver } from '../machines/harness.ts';
import { Recorder } from './cluster-recorder.ts';

const ref = { namespace: 'default', name: 'demo', uid: 'u1' };
const T0 = Date.parse('2026-11-21T12:00:00Z');
let clock = T0;
const at = (): number => (clock += 1000);
const listed = (healthy: boolean): ClusterEvent => ({
  type: 'etcd.members.listed',
  at: at(),
  etcd: {
    clusterID: 'c1',
    members: [{ id: 'a0', name: 'demo-0', peerURL: peerURL(ref, 'demo-0'), learner: false }],
    healthy: healthy ? ['a0'] : [],
  },
});

/** Walks a one-member cluster to steady (its PodDisruptionBudget set last), recording the status after every step as the runtime would. */
function bootstrapOne(): Recorder {
  const r = new Recorder();
  r.d.send({ type: 'k8s.members.listed', at: at(), members: [] });
  r.send(
    { type: 'k8s.cluster.updated', at: at(), spec: { replicas: 1, version: '3.6.16' }, progressDeadlineSeconds: 600 },
    { type: 'effect.ensureServices.succeeded', at: at() },
    { type: 'effect.createMember.succeeded', at: at() },
    {
      type: 'k8s.members.listed',
      at: at(),
      members: [{ name: 'demo-0', ordinal: 0, bootstrap: true, dormant: false, state: 'voter', deleting: false }],
    },
    listed(true),
    listed(true),
    { type: 'effect.setDisruptionBudget.succeeded', at: at(), result: { minAvailable: 1 } },
  );
  return r;
}

const condition = (s: EtcdClusterStatus | undefined, type: string) => s?.conditions?.find((c) => c.type === type);

describe('manager: the status a user reads', () => {
  it('a bootstrapped cluster is Available, not Progressing, and records that it bootstrapped', () => {
    const { status } = bootstrapOne();
    expect(status?.observed).toEqual({
      target: { replicas: 1, version: '3.6.16' },
      step: 'Steady',
      sequence: 7,
      stepStartedAt: expect.any(String) as string,
    });
    expect(condition(status, 'Available')).toMatchObject({
      status: 'True',
      reason: 'QuorumHealthy',
      message: '1 of 1 voters healthy',
    });
    expect(condition(status, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'Steady',
      message: 'one voter, healthy',
    });
    expect(condition(status, 'Bootstrapped')).toMatchObject({ status: 'True', reason: 'Completed' });
    expect(status).toMatchObject({
      readyMembers: 1,
      clusterID: 'c1',
      selector: 'etcd-operator.dev/cluster=demo',
      members: [{ name: 'demo-0', memberID: 'a0', role: 'voter', state: 'voter' }],
    });
  });

  it('a step past progressDeadlineSeconds is reported Degraded with what it waits for, and keeps trying', () => {
    const { d, status, seq } = bootstrapOne();
    const scale: ClusterEvent = {
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 2, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    };
    d.send(scale);
    const raising = clusterStatus(
      status,
      { seq: seq + 1, from: 'steady', to: d.state, context: d.context, generation: 2 },
      scale.at,
    );
    expect(condition(raising, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'UpdatingBudget',
      message: expect.stringContaining('setting PodDisruptionBudget demo to minAvailable 2') as string,
    });
    const raised: ClusterEvent = {
      type: 'effect.setDisruptionBudget.succeeded',
      at: at(),
      result: { minAvailable: 2 },
    };
    d.send(raised);
    const during = clusterStatus(
      raising,
      { seq: seq + 2, from: 'updatingBudget.running', to: d.state, context: d.context, generation: 2 },
      raised.at,
    );
    expect(condition(during, 'Progressing')).toMatchObject({ status: 'True', reason: 'ScalingUp' });
    expect(condition(during, 'Degraded')).toMatchObject({ status: 'False' });
    const late = clusterStatus(
      during,
      { seq: seq + 3, from: d.state, to: d.state, context: d.context, generation: 2 },
      raised.at + 601_000,
    );
    expect(condition(late, 'Degraded')).toMatchObject({ status: 'True', reason: 'ProgressDeadlineExceeded' });
    expect(condition(late, 'Degraded')?.message).toContain('adding demo-1 to etcd as a learner');
  });

  it("keeps a condition's transition time while its status holds, and loses quorum visibly", () => {
    const { d, status, seq } = bootstrapOne();
    const since = condition(status, 'Available')?.lastTransitionTime;
    const e = listed(false);
    d.send(e);
    const after = clusterStatus(
      status,
      { seq: seq + 1, from: 'steady', to: d.state, context: d.context, generation: 1 },
      e.at,
    );
    expect(condition(after, 'Available')).toMatchObject({ status: 'False', reason: 'QuorumLost' });
    expect(condition(after, 'Available')?.lastTransitionTime).not.toBe(since);
    expect(condition(after, 'Bootstrapped')?.lastTransitionTime).toBe(
      condition(status, 'Bootstrapped')?.lastTransitionTime,
    );
  });
});

describe('cluster status at zero replicas', () => {
  it('a cluster parked at 0 is not Available on purpose (Dormant), not unreachable', () => {
    const r = bootstrapOne();
    const { d } = r;
    r.generation = 2;
    const dormantMember = (state: MemberState): ClusterEvent => ({
      type: 'k8s.members.listed',
      at: at(),
      members: [{ name: 'demo-0', ordinal: 0, bootstrap: true, dormant: true, state, deleting: false }],
    });
    r.send(
      { type: 'k8s.cluster.updated', at: at(), spec: { replicas: 0, version: '3.6.16' }, progressDeadlineSeconds: 600 },
      { type: 'effect.setDormant.succeeded', at: at() },
      dormantMember('parking'),
      { type: 'etcd.unreachable', at: at(), error: 'no member Pod runs' },
    );
    let s = r.status;
    expect(d.state).toBe('parking.awaitingPark');
    expect(condition(s, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Dormant',
      message: 'scaling to zero on purpose: members are stopping; volumes are kept; scale up to resume',
    });
    // Parked: the PodDisruptionBudget goes, then the cluster rests.
    d.send(dormantMember('dormant'));
    expect(d.state).toBe('updatingBudget.running');
    const deleted: ClusterEvent = {
      type: 'effect.setDisruptionBudget.succeeded',
      at: at(),
      result: { minAvailable: null },
    };
    d.send(deleted);
    s = clusterStatus(
      s,
      { seq: r.seq + 1, from: 'updatingBudget.running', to: d.state, context: d.context, generation: 2 },
      deleted.at,
    );
    expect(d.state).toBe('dormant');
    expect(condition(s, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Dormant',
      message: 'scaled to zero on purpose: no member runs; volumes are kept; scale up to resume',
    });
    expect(condition(s, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('a cluster whose Pods stopped while it should run is unreachable, not dormant', () => {
    const { d, status, seq } = bootstrapOne();
    const e: ClusterEvent = { type: 'etcd.unreachable', at: at(), error: 'no member Pod runs' };
    d.send(e);
    const s = clusterStatus(
      status,
      { seq: seq + 1, from: 'steady', to: d.state, context: d.context, generation: 1 },
      e.at,
    );
    expect(condition(s, 'Available')).toMatchObject({
      status: 'False',
      reason: 'EtcdUnreachable',
      message: 'etcd does not answer: no member Pod runs',
    });
  });
});

describe('cluster status of a failed step', () => {
  it('says Degraded (StepFailed) with the error, and nothing in progress', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    d.send({ type: 'k8s.members.listed', at: at(), members: [] });
    d.send({ type: 'k8s.members.listed', at: at(), members: [] });
    d.send({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 1, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    });
    d.send({
      type: 'effect.ensureServices.failed',
      at: at(),
      error: { code: 'ERR_ENSURE_SERVICES', message: 'HTTP 422: invalid', retryable: false },
    });
    expect(d.state).toBe('failed');
    const s = clusterStatus(
      undefined,
      {
        seq: 2,
        from: 'bootstrapping.seeding.creatingServices.running',
        to: d.state,
        context: d.context,
        generation: 1,
      },
      at(),
    );
    expect(condition(s, 'Degraded')).toMatchObject({ status: 'True', reason: 'StepFailed' });
    expect(condition(s, 'Degraded')?.message).toContain('ERR_ENSURE_SERVICES: HTTP 422: invalid');
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'Failed' });
    expect(s.observed?.step).toBe('Failed');
    // A bootstrap that failed did not complete.
    expect(condition(s, 'Bootstrapped')).toBeUndefined();
  });

  it('a member that stopped on such a failure makes its cluster Degraded (MemberFailed), saying why', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    d.send({ type: 'k8s.members.listed', at: at(), members: [] });
    d.send({ type: 'k8s.members.listed', at: at(), members: [] });
    d.send({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 1, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    });
    d.send({ type: 'effect.ensureServices.succeeded', at: at() });
    d.send({ type: 'effect.createMember.succeeded', at: at() });
    const failure =
      'a step failed in a way trying again cannot fix (ERR_CREATE_POD: HTTP 422: Pod "demo-0" is invalid)';
    d.send({
      type: 'k8s.members.listed',
      at: at(),
      members: [
        { name: 'demo-0', ordinal: 0, bootstrap: true, dormant: false, state: 'failed', deleting: false, failure },
      ],
    });
    const s = clusterStatus(undefined, { seq: 4, from: d.state, to: d.state, context: d.context, generation: 1 }, at());
    expect(condition(s, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'MemberFailed',
      message: `EtcdMember demo-0 stopped: ${failure}`,
    });
    expect(condition(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'Bootstrapping' });
  });

  it('reports the version each member answers with, and the oldest still running; a member that does not run does not count', () => {
    const d = new Driver(clusterMachine, { cluster: ref });
    const member = (n: number, version: string, state: MemberState = 'voter'): MemberObservation => ({
      name: `demo-${n}`,
      ordinal: n,
      bootstrap: n === 0,
      dormant: false,
      state,
      deleting: false,
      version,
    });
    const statusAfter = (e: ClusterEvent, previous?: EtcdClusterStatus) => {
      const from = d.state;
      d.send(e);
      return clusterStatus(previous, { seq: 1, from, to: d.state, context: d.context, generation: 1 }, e.at);
    };
    statusAfter({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 2, version: '3.6.16' },
      progressDeadlineSeconds: 600,
    });
    statusAfter({
      type: 'k8s.members.listed',
      at: at(),
      members: [member(0, '3.6.16'), member(1, '3.6.99', 'upgrading')],
    });
    const etcd = (versions: Record<string, string>): ClusterEvent => ({
      type: 'etcd.members.listed',
      at: at(),
      etcd: {
        clusterID: 'c1',
        members: [0, 1].map((n) => ({
          id: `a${n}`,
          name: `demo-${n}`,
          peerURL: peerURL(ref, `demo-${n}`),
          learner: false,
        })),
        healthy: Object.keys(versions),
        versions,
      },
    });
    // demo-0 answers on 3.5.35 (its spec asks for 3.6.16: it is being rolled); demo-1 does not answer.
    const rolling = statusAfter(etcd({ a0: '3.5.35' }));
    expect(rolling.members?.map((m) => [m.name, m.version])).toEqual([
      ['demo-0', '3.5.35'],
      ['demo-1', '3.6.99'],
    ]);
    expect(rolling.version).toBe('3.5.35');
    // Nobody answers: what was known stays.
    expect(statusAfter({ type: 'etcd.unreachable', at: at(), error: 'no endpoint' }, rolling).version).toBe('3.5.35');
  });
});

describe('manager: the status of maintenance', () => {
  const MiB = 2 ** 20;
  /** etcd of the one member: its database sizes in MiB, and whether NOSPACE is raised. */
  const probed = (size: number, inUse: number, noSpace = false): ClusterEvent => ({
    type: 'etcd.members.listed',
    at: at(),
    etcd: {
      clusterID: 'c1',
      members: [{ id: 'a0', name: 'demo-0', peerURL: peerURL(ref, 'demo-0'), learner: false }],
      healthy: ['a0'],
      leader: 'a0',
      sizes: { a0: { dbSize: size * MiB, dbSizeInUse: inUse * MiB } },
      ...(noSpace ? { alarms: [{ memberID: 'a0', alarm: 'NOSPACE' }] } : {}),
    },
  });
  const withSpec = (maintenance: object): ClusterEvent =>
    ({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 1, version: '3.6.16' },
      progressDeadlineSeconds: 600,
      maintenance,
    }) as ClusterEvent;

  /** A steady one-member cluster, and a step function that records the status after each event. */
  function cluster() {
    const r = bootstrapOne();
    r.generation = 2;
    const step = (e: ClusterEvent): EtcdClusterStatus | undefined => {
      r.send(e);
      return r.status;
    };
    return { d: r.d, step };
  }

  it('a finished defragmentation run is recorded as Defragmented, with what each member gave back', () => {
    const { d, step } = cluster();
    step(
      withSpec({
        defrag: { schedule: null, timeZone: null, fragmentedBytes: 64 * MiB, fragmentedPercent: null },
        quotaBytes: null,
      }),
    );
    const running = step(probed(200, 100));
    expect(d.state).toBe('defragmenting.running.running');
    expect(condition(running, 'Progressing')).toMatchObject({ status: 'True', reason: 'Defragmenting' });
    expect(condition(running, 'Defragmented')).toBeUndefined();
    step({ type: 'effect.defragment.succeeded', at: at(), result: { member: 'demo-0', freed: 100 * MiB } });
    step(probed(100, 100));
    const done = step(probed(100, 100));
    expect(d.state).toBe('steady');
    expect(condition(done, 'Defragmented')).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: expect.stringMatching(
        /^freed 100 MiB on 1 member \(demo-0 100 MiB\), over the threshold with 100 MiB fragmented, finished at 2026-11-21T12:\d\d:\d\dZ$/,
      ) as string,
    });
  });

  it('growing volumes says each member, then VolumesExpanded True; a refusing StorageClass is VolumesExpanded False (ExpansionNotAllowed)', () => {
    const sized = (size: number): ClusterEvent => ({
      type: 'k8s.cluster.updated',
      at: at(),
      spec: { replicas: 1, version: '3.6.16' },
      progressDeadlineSeconds: 600,
      volumeSize: { quantity: `${size}Mi`, bytes: size * MiB },
    });
    const claim = (requested: number, capacity: number): ClusterEvent => ({
      type: 'k8s.claims.listed',
      at: at(),
      claims: [{ member: 'demo-0', storageClass: 'local-sized', requested: requested * MiB, capacity: capacity * MiB }],
    });
    const { d, step } = cluster();
    step(claim(64, 64));
    step(sized(64));
    const asking = step(sized(128));
    expect(d.state).toBe('resizingVolumes.patching.running');
    expect(condition(asking, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'ResizingVolumes',
      message: expect.stringMatching(
        /^growing volumes to 128Mi: demo-0 to ask; asking the claim of demo-0 for 128Mi \(since .*\)$/,
      ) as string,
    });
    step({ type: 'effect.growVolume.succeeded', at: at(), result: { patched: true } });
    step(claim(128, 64));
    const done = step(claim(128, 128));
    expect(d.state).toBe('steady');
    expect(condition(done, 'VolumesExpanded')).toMatchObject({
      status: 'True',
      reason: 'Completed',
      message: "every member's volume claim shows 128Mi: demo-0 done",
    });

    step(sized(256));
    const refused = step({
      type: 'effect.growVolume.failed',
      at: at(),
      error: {
        code: 'ERR_VOLUME_EXPANSION_NOT_ALLOWED',
        message: 'StorageClass local-sized does not',
        retryable: false,
      },
    });
    expect(d.state).toBe('volumesRefused');
    expect(condition(refused, 'VolumesExpanded')).toMatchObject({
      status: 'False',
      reason: 'ExpansionNotAllowed',
      message: expect.stringContaining(
        "storage.size 256Mi is not applied to the members' volumes: StorageClass local-sized does not. Tried again at",
      ) as string,
    });
    expect(condition(refused, 'Progressing')).toMatchObject({ status: 'False', reason: 'VolumesRefused' });
    expect(condition(refused, 'Available')).toMatchObject({ status: 'True' });
  });

  it('NOSPACE shows at once as SpaceAlarm and Degraded (NoSpace) naming the quota; SpaceAlarm is False once disarmed', () => {
    const { step } = cluster();
    const before = step(withSpec({ defrag: null, quotaBytes: 16 * MiB }));
    expect(condition(before, 'SpaceAlarm')).toBeUndefined();
    const raised = step(probed(17, 17, true));
    const says =
      'etcd raised its NOSPACE alarm: the database reached its quota of 16 MiB (spec.options.quotaBackendBytes) and every write is refused; the operator compacts the history, defragments every member and disarms the alarm once the data fits';
    expect(condition(raised, 'SpaceAlarm')).toMatchObject({ status: 'True', reason: 'NoSpace', message: says });
    expect(condition(raised, 'Degraded')).toMatchObject({ status: 'True', reason: 'NoSpace', message: says });
    expect(condition(raised, 'Progressing')).toMatchObject({ status: 'True', reason: 'RecoveringSpace' });
    step({
      type: 'effect.compact.succeeded',
      at: at(),
      result: { revision: 99, member: 'demo-0', dbSizeInUse: 1 * MiB },
    });
    step({ type: 'effect.defragment.succeeded', at: at(), result: { member: 'demo-0', freed: 16 * MiB } });
    step(probed(1, 1, true));
    step({ type: 'effect.disarmAlarm.succeeded', at: at(), result: { disarmed: 1 } });
    const disarmed = step(probed(1, 1));
    expect(condition(disarmed, 'SpaceAlarm')).toMatchObject({
      status: 'False',
      reason: 'NoAlarm',
      message: expect.stringMatching(
        /^the NOSPACE alarm was disarmed at .* after compacting to revision 99 and defragmenting 1 member: 1 MiB in use of the 16 MiB quota$/,
      ) as string,
    });
    expect(condition(disarmed, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('records Upgraded only when the roll is over and etcd answers from every member with the version, not each time a member of it is done', () => {
    const member = (n: number, version: string): MemberObservation => ({
      name: `demo-${n}`,
      ordinal: n,
      bootstrap: n === 0,
      dormant: false,
      state: 'voter',
      deleting: false,
      version,
    });
    const context = (versions: string[], answering: (string | null)[] | null) => ({
      ...initialClusterContext(ref),
      spec: { replicas: 2, version: '3.6.16' },
      target: { replicas: 2, version: '3.6.16' },
      members: versions.map((v, n) => member(n, v)),
      etcd: answering && {
        clusterID: 'c1',
        members: versions.map((_, n) => ({
          id: `a${n}`,
          name: `demo-${n}`,
          peerURL: peerURL(ref, `demo-${n}`),
          learner: false,
        })),
        healthy: answering.flatMap((v, n) => (v ? [`a${n}`] : [])),
        versions: Object.fromEntries(answering.flatMap((v, n) => (v ? [[`a${n}`, v]] : []))),
      },
    });
    const step = (versions: string[], answering: (string | null)[] | null, from = 'upgrading.awaitingMember') => ({
      seq: 9,
      from,
      to: 'observing',
      context: context(versions, answering),
      generation: 2,
    });
    const midway = clusterStatus(undefined, step(['3.5.35', '3.6.16'], ['3.5.35', '3.6.16']), at());
    expect(condition(midway, 'Upgraded')).toMatchObject({ status: 'False', reason: 'Upgrading' });
    // Every EtcdMember asks for 3.6.16, but etcd was not heard from: not yet.
    const unheard = clusterStatus(midway, step(['3.6.16', '3.6.16'], null), at());
    expect(condition(unheard, 'Upgraded')).toMatchObject({
      status: 'False',
      message: 'upgrading to etcd 3.6.16: 0 of 2 members answer with it; not yet: demo-0, demo-1',
    });
    const over = clusterStatus(unheard, step(['3.6.16', '3.6.16'], ['3.6.16', '3.6.16'], 'observing'), at());
    expect(condition(over, 'Upgraded')).toMatchObject({
      status: 'True',
      message: 'every member runs etcd 3.6.16',
    });
  });
});
