import { describe, expect, it } from 'vitest';
import type { EtcdCluster, EtcdSnapshot, EtcdSnapshotSchedule } from '../../api/v1alpha1/index.ts';
import type { EtcdObservation } from '../../machines/types.ts';
import { ManagerMetrics } from '../../manager/metrics.ts';
import { samples } from './exposition.ts';

const NOW = Date.parse('2026-11-27T10:00:00Z');
const ref = { namespace: 'prod', name: 'demo', uid: 'u-demo' };
const at = { namespace: 'prod', cluster: 'demo' };
const series = (name: string, labels: Record<string, string> = at): string =>
  `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;

const cluster = (status: EtcdCluster['status']): EtcdCluster =>
  ({
    metadata: { namespace: 'prod', name: 'demo', uid: 'u-demo' },
    spec: { replicas: 3, version: '3.6.16', progressDeadlineSeconds: 600, options: { quotaBackendBytes: '1Gi' } },
    status,
  }) as unknown as EtcdCluster;

const snapshot = (name: string, phase: string, status: object, schedule?: string): EtcdSnapshot =>
  ({
    metadata: { namespace: 'prod', name, ...(schedule ? { labels: { 'etcd-operator.dev/schedule': schedule } } : {}) },
    spec: { clusterRef: { name: 'demo' } },
    status: { phase, ...status },
  }) as unknown as EtcdSnapshot;

const schedule = (spec: object, status: object = {}): EtcdSnapshotSchedule =>
  ({
    metadata: { namespace: 'prod', name: 'hourly', creationTimestamp: '2026-11-20T00:00:00Z' },
    spec: { clusterRef: { name: 'demo' }, schedule: '0 * * * *', suspend: false, ...spec },
    status,
  }) as unknown as EtcdSnapshotSchedule;

/** etcd's answer: three voters a, b, c; `healthy` of them answered; `leader` leads. */
const answer = (healthy: string[], leader: string | null, extra: Partial<EtcdObservation> = {}): EtcdObservation => ({
  clusterID: 'c1',
  members: ['a', 'b', 'c'].map((id) => ({ id, name: `demo-${id}`, peerURL: '', learner: false })),
  healthy,
  leader,
  ...extra,
});

/** A manager's metrics watching caches that hold these objects. */
function metricsOf(objects: {
  clusters?: EtcdCluster[];
  snapshots?: EtcdSnapshot[];
  schedules?: EtcdSnapshotSchedule[];
}) {
  const m = new ManagerMetrics(() => NOW);
  m.clusters.watch({
    EtcdCluster: { list: () => objects.clusters ?? [] },
    EtcdSnapshot: { list: () => objects.snapshots ?? [] },
    EtcdSnapshotSchedule: { list: () => objects.schedules ?? [] },
  });
  return m;
}

describe('manager metrics: per cluster', () => {
  it('a cluster stepping shows its desired and ready members, its step, when it started and its deadline', () => {
    const m = metricsOf({
      clusters: [
        cluster({
          readyMembers: 2,
          observed: { step: 'ScalingUp', state: 'scalingUp.joining.adding', stepStartedAt: '2026-11-27T09:50:00Z' },
        }),
      ],
    });
    const s = samples(m.render());
    expect(s.get(series('etcd_operator_cluster_members_desired'))).toBe(3);
    expect(s.get(series('etcd_operator_cluster_members_ready'))).toBe(2);
    expect(s.get(series('etcd_operator_cluster_step', { ...at, step: 'ScalingUp' }))).toBe(1);
    expect(s.get(series('etcd_operator_cluster_step_in_flight'))).toBe(1);
    expect(s.get(series('etcd_operator_cluster_step_started_timestamp_seconds'))).toBe(
      Date.parse('2026-11-27T09:50:00Z') / 1000,
    );
    expect(s.get(series('etcd_operator_cluster_progress_deadline_seconds'))).toBe(600);
    expect(s.get(series('etcd_operator_cluster_quota_backend_bytes'))).toBe(2 ** 30);
  });

  it('a cluster at rest shows no step in flight', () => {
    const m = metricsOf({ clusters: [cluster({ observed: { step: 'Steady', state: 'steady' } })] });
    expect(samples(m.render()).get(series('etcd_operator_cluster_step_in_flight'))).toBe(0);
  });

  it("etcd's answer shows voters, quorum, healthy voters, the leader, database sizes and alarms", () => {
    const m = metricsOf({ clusters: [cluster({})] });
    m.clusters.probed(
      ref,
      answer(['a', 'b'], 'a', {
        sizes: { a: { dbSize: 900, dbSizeInUse: 400 }, b: { dbSize: 800, dbSizeInUse: 400 } },
        alarms: [{ memberID: 'a', alarm: 'NOSPACE' }],
      }),
    );
    const s = samples(m.render());
    expect(s.get(series('etcd_operator_cluster_voters'))).toBe(3);
    expect(s.get(series('etcd_operator_cluster_learners'))).toBe(0);
    expect(s.get(series('etcd_operator_cluster_quorum'))).toBe(2);
    expect(s.get(series('etcd_operator_cluster_healthy_voters'))).toBe(2);
    expect(s.get(series('etcd_operator_cluster_has_leader'))).toBe(1);
    expect(s.get(series('etcd_operator_member_healthy', { ...at, member: 'demo-c' }))).toBe(0);
    expect(s.get(series('etcd_operator_member_is_leader', { ...at, member: 'demo-a' }))).toBe(1);
    expect(s.get(series('etcd_operator_member_database_size_bytes', { ...at, member: 'demo-a' }))).toBe(900);
    expect(s.get(series('etcd_operator_member_database_in_use_bytes', { ...at, member: 'demo-b' }))).toBe(400);
    expect(s.has(series('etcd_operator_member_database_size_bytes', { ...at, member: 'demo-c' }))).toBe(false);
    expect(s.get(series('etcd_operator_cluster_alarm', { ...at, alarm: 'NOSPACE' }))).toBe(1);
    expect(s.get(series('etcd_operator_cluster_alarm', { ...at, alarm: 'CORRUPT' }))).toBe(0);
  });

  it('counts a change of leader between two probes, not a leader lost and found again', () => {
    const m = metricsOf({ clusters: [cluster({})] });
    const changes = () => samples(m.render()).get(series('etcd_operator_cluster_leader_changes_total'));
    m.clusters.probed(ref, answer(['a', 'b', 'c'], 'a'));
    expect(changes()).toBe(0);
    m.clusters.probed(ref, answer(['a', 'b', 'c'], null));
    m.clusters.probed(ref, answer(['a', 'b', 'c'], 'a'));
    expect(changes()).toBe(0);
    m.clusters.probed(ref, answer(['a', 'b', 'c'], 'b'));
    m.clusters.probed(ref, answer(['a', 'b', 'c'], 'c'));
    expect(changes()).toBe(2);
  });

  it('a cluster no member answers keeps its last member list, with no healthy voter and no sizes', () => {
    const m = metricsOf({ clusters: [cluster({})] });
    m.clusters.probed(ref, answer(['a', 'b', 'c'], 'a', { sizes: { a: { dbSize: 1, dbSizeInUse: 1 } } }));
    m.clusters.probed(ref, 'none of 3 members answered the member list');
    const s = samples(m.render());
    expect(s.get(series('etcd_operator_cluster_voters'))).toBe(3);
    expect(s.get(series('etcd_operator_cluster_healthy_voters'))).toBe(0);
    expect(s.get(series('etcd_operator_cluster_etcd_reachable'))).toBe(0);
    expect(s.get(series('etcd_operator_member_healthy', { ...at, member: 'demo-a' }))).toBe(0);
    expect(s.has(series('etcd_operator_member_database_size_bytes', { ...at, member: 'demo-a' }))).toBe(false);
  });

  it('a cluster scaled to zero shows no voters, health or sizes: its members stop on purpose', () => {
    const parked = { ...cluster({}), spec: { ...cluster({}).spec, replicas: 0 } } as EtcdCluster;
    const m = metricsOf({ clusters: [parked] });
    m.clusters.probed(ref, answer(['a', 'b', 'c'], 'a'));
    m.clusters.probed(ref, 'no member Pod runs');
    const text = m.render();
    expect(samples(text).get(series('etcd_operator_cluster_members_desired'))).toBe(0);
    expect(text).not.toContain('etcd_operator_cluster_healthy_voters{');
    expect(text).not.toContain('etcd_operator_member_healthy{');
  });

  it('a cluster gone from the cache is gone from the metrics', () => {
    const clusters = [cluster({})];
    const m = metricsOf({ clusters });
    m.clusters.probed(ref, answer(['a'], 'a'));
    clusters.pop();
    expect(m.render()).not.toContain('cluster="demo"');
  });
});

describe('manager metrics: snapshots and schedules', () => {
  it('shows the newest successful and failed snapshot per cluster and schedule, and its size', () => {
    const m = metricsOf({
      snapshots: [
        snapshot('s1', 'Succeeded', { completionTime: '2026-11-27T08:00:10Z', size: 100 }, 'hourly'),
        snapshot('s2', 'Succeeded', { completionTime: '2026-11-27T09:00:10Z', size: 200 }, 'hourly'),
        snapshot('s3', 'Failed', { startTime: '2026-11-27T09:30:00Z' }, 'hourly'),
        snapshot('once', 'Succeeded', { completionTime: '2026-11-26T00:00:00Z', size: 50 }),
        snapshot('s4', 'Running', { startTime: '2026-11-27T09:59:00Z' }, 'hourly'),
      ],
    });
    const s = samples(m.render());
    const hourly = { ...at, schedule: 'hourly' };
    expect(s.get(series('etcd_operator_snapshot_last_success_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-27T09:00:10Z') / 1000,
    );
    expect(s.get(series('etcd_operator_snapshot_last_success_size_bytes', hourly))).toBe(200);
    expect(s.get(series('etcd_operator_snapshot_last_failure_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-27T09:30:00Z') / 1000,
    );
    expect(s.get(series('etcd_operator_snapshot_last_success_size_bytes', { ...at, schedule: '' }))).toBe(50);
  });

  it('shows when the newest proven snapshot was stored and when a restore last failed to prove one', () => {
    const verified = (status: string, at: string) => ({
      conditions: [{ type: 'Verified', status, reason: 'x', message: '', lastTransitionTime: at }],
    });
    const m = metricsOf({
      snapshots: [
        snapshot(
          'p1',
          'Succeeded',
          { completionTime: '2026-11-27T07:00:10Z', ...verified('True', '2026-11-27T07:01:00Z') },
          'hourly',
        ),
        snapshot(
          'p2',
          'Succeeded',
          { completionTime: '2026-11-27T08:00:10Z', ...verified('True', '2026-11-27T08:01:00Z') },
          'hourly',
        ),
        snapshot(
          'bad',
          'Succeeded',
          { completionTime: '2026-11-27T09:00:10Z', ...verified('False', '2026-11-27T09:01:30Z') },
          'hourly',
        ),
        snapshot('unproven', 'Succeeded', { completionTime: '2026-11-27T10:00:10Z' }, 'hourly'),
      ],
    });
    const s = samples(m.render());
    const hourly = { ...at, schedule: 'hourly' };
    expect(s.get(series('etcd_operator_snapshot_last_verified_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-27T08:00:10Z') / 1000,
    );
    expect(s.get(series('etcd_operator_snapshot_last_verify_failure_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-27T09:01:30Z') / 1000,
    );
    expect(s.get(series('etcd_operator_snapshot_last_success_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-27T10:00:10Z') / 1000,
    );
  });

  it("shows a schedule's interval, whether it is suspended, its creation and its last success", () => {
    const m = metricsOf({
      schedules: [
        schedule({ schedule: '*/15 * * * *' }, { lastSuccessfulTime: '2026-11-27T09:45:05Z', missedRuns: 2 }),
      ],
    });
    const s = samples(m.render());
    const hourly = { ...at, schedule: 'hourly' };
    expect(s.get(series('etcd_operator_schedule_interval_seconds', hourly))).toBe(900);
    expect(s.get(series('etcd_operator_schedule_suspended', hourly))).toBe(0);
    expect(s.get(series('etcd_operator_schedule_created_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-20T00:00:00Z') / 1000,
    );
    expect(s.get(series('etcd_operator_schedule_last_success_timestamp_seconds', hourly))).toBe(
      Date.parse('2026-11-27T09:45:05Z') / 1000,
    );
    expect(s.get(series('etcd_operator_schedule_missed_runs', hourly))).toBe(2);
  });

  it('a schedule that is not valid shows no interval', () => {
    const m = metricsOf({ schedules: [schedule({ schedule: 'every tuesday' })] });
    expect(m.render()).not.toContain('etcd_operator_schedule_interval_seconds{');
  });
});

describe('manager metrics: steps, intents, the journal and each object', () => {
  it('counts steps left by outcome, intent failures by code, and a heartbeat per object', () => {
    const m = metricsOf({});
    m.stepped('cluster', 'scalingUp.joining.adding', 'scalingUp.joining.promoting', () => 'finished');
    m.stepped('cluster', 'scalingUp.joining.promoting', 'steady', () => 'finished');
    m.stepped('cluster', 'upgrading.rolling', 'failed', () => 'failed');
    m.outcome({ type: 'addLearner', ok: false, recovered: false, ms: 30, code: 'ERR_ETCD_UNAVAILABLE' });
    m.outcome({ type: 'addLearner', ok: true, recovered: false, ms: 20 });
    m.journalWriteSeconds.observe(0.002);
    m.reconciled('EtcdCluster/prod/demo', NOW);
    m.reconciled('EtcdMember/prod/demo-0', NOW - 5000);
    m.forget('EtcdMember/prod/demo-0');
    const s = samples(m.render());
    const ended = (step: string, outcome: string) =>
      s.get(series('etcd_operator_steps_ended_total', { machine: 'cluster', step, outcome }));
    expect(ended('scalingUp', 'finished')).toBe(1);
    expect(ended('upgrading', 'failed')).toBe(1);
    expect(s.get(series('etcd_operator_steps_total', { machine: 'cluster', to: 'scalingUp' }))).toBe(1);
    expect(
      s.get(series('etcd_operator_intent_failures_total', { kind: 'addLearner', code: 'ERR_ETCD_UNAVAILABLE' })),
    ).toBe(1);
    expect(s.get(series('etcd_operator_intents_total', { kind: 'addLearner', result: 'succeeded' }))).toBe(1);
    expect(s.get(series('etcd_operator_intent_duration_seconds_count', { kind: 'addLearner' }))).toBe(2);
    expect(s.get('etcd_operator_journal_write_seconds_count')).toBe(1);
    expect(
      s.get(
        series('etcd_operator_object_last_reconcile_timestamp_seconds', {
          kind: 'EtcdCluster',
          namespace: 'prod',
          name: 'demo',
        }),
      ),
    ).toBe(NOW / 1000);
    expect(m.render()).not.toContain('name="demo-0"');
  });

  it('shows the process metrics under the names Node dashboards read', () => {
    const s = samples(new ManagerMetrics().render());
    for (const name of [
      'process_cpu_seconds_total',
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'process_open_fds',
      'process_max_fds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(s.get(name), name).toBeGreaterThan(0);
    expect([...s.keys()].some((k) => k.startsWith('nodejs_version_info{'))).toBe(true);
    expect([...s.keys()].some((k) => k.startsWith('nodejs_heap_space_size_used_bytes{space='))).toBe(true);
  });
});
