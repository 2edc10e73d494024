import { describe, expect, it } from 'vitest';
import { ago, bytes, clusterReport, renderReport } from '../../plugin/report.ts';
import { sizesFromMetrics } from '../../plugin/manager-proxy.ts';
import { cluster, members, schedules, snapshots } from './fixtures.ts';

const NOW = Date.parse('2026-11-27T10:10:00Z');
const sizes = new Map([
  ['demo-0', { dbSize: 20 * 1024 * 1024, dbInUse: 5 * 1024 * 1024 }],
  ['demo-1', { dbSize: 21 * 1024 * 1024, dbInUse: null }],
]);

describe('kubectl etcd status: the report from what the manager wrote', () => {
  const report = clusterReport({ cluster, members, snapshots, schedules, sizes });

  it('names the leader and each member health from the resume annotation, versions and stuck Pods from the members', () => {
    expect(report.leader).toBe('demo-1');
    expect(report.members.map((m) => [m.name, m.health, m.leader, m.state, m.version])).toEqual([
      ['demo-0', 'healthy', false, 'voter', '3.6.16'],
      ['demo-1', 'healthy', true, 'voter', '3.6.16'],
      ['demo-2', 'down', false, 'notReady', '3.6.16'],
    ]);
    expect(report.members[2]?.message).toBe('Back-off pulling image "etcd:v3.6.16"');
    expect(report.attention).toMatch(/demo-2 does not answer/);
  });

  it('takes the newest good and the newest failed backup of this cluster only', () => {
    expect(report.lastBackup).toMatchObject({ name: 'demo-new', size: 3 * 1024 * 1024 });
    expect(report.lastFailedBackup).toMatchObject({ name: 'demo-bad', reason: 'the bucket backups does not exist' });
    expect(report.schedules).toEqual([
      expect.objectContaining({ name: 'nightly', nextScheduleTime: '2026-11-28T03:00:00Z' }),
    ]);
  });

  it('prints it for people: header, members table with sizes, backups, conditions', () => {
    const text = renderReport(report, NOW);
    expect(text).toContain('EtcdCluster prod/demo');
    expect(text).toContain('Available:  True (2 of 3 voters healthy)');
    expect(text).toContain('Members:    2 of 3 ready; leader demo-1; cluster ID c1');
    expect(text).toContain('Step:       Steady (at rest)');
    expect(text).toMatch(/MEMBER\s+ROLE\s+STATE\s+HEALTH\s+VERSION\s+DB SIZE\s+IN USE\s+ID/);
    expect(text).toMatch(/demo-0\s+voter\s+voter\s+healthy\s+3\.6\.16\s+20 MiB\s+5\.0 MiB\s+a1/);
    expect(text).toMatch(/demo-1 \*\s+voter\s+voter\s+healthy\s+3\.6\.16\s+21 MiB\s+-\s+b2/);
    expect(text).toMatch(/demo-2\s+voter\s+notReady\s+down\s+3\.6\.16\s+-\s+-\s+c3/);
    expect(text).toContain('demo-2: Back-off pulling image');
    expect(text).toContain(
      'Last backup:        demo-new, 5m ago (2026-11-27T10:05:00Z), 3.0 MiB, pvc://backups/new.db',
    );
    expect(text).toContain('Last failed backup: demo-bad, 4m ago: the bucket backups does not exist');
    expect(text).toContain('Schedule nightly: "0 3 * * *", next 2026-11-28T03:00:00Z');
    expect(text).toMatch(/Degraded\s+True\s+MemberDown\s+demo-2 does not answer/);
  });

  it('a step in flight says for how long and what it waits for', () => {
    const busy = structuredClone(cluster);
    busy.status = {
      ...busy.status,
      observed: { step: 'ScalingUp', stepStartedAt: '2026-11-27T10:08:00Z' },
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'ScalingUp',
          message: 'waiting for learner demo-3 to start etcd (since 2026-11-27T10:08:00Z)',
          lastTransitionTime: '2026-11-27T10:08:00Z',
        },
      ],
    };
    const text = renderReport(
      clusterReport({ cluster: busy, members, snapshots: [], schedules: [], sizes: 'none' }),
      NOW,
    );
    expect(text).toContain('Step:       ScalingUp (in flight for 2m)');
    expect(text).toContain('waiting for learner demo-3 to start etcd');
    expect(text).toContain('Last backup:        none (kubectl etcd snapshot NAME takes one)');
    expect(text).toContain('Database sizes: none');
  });

  it('a cluster the manager has not written yet reads as such, with no health guessed', () => {
    const fresh = { ...cluster, metadata: { name: 'new', namespace: 'prod' }, status: undefined };
    const r = clusterReport({ cluster: fresh, members: [], snapshots: [], schedules: [], sizes: 'none' });
    expect(r).toMatchObject({ leader: null, members: [], available: null, step: { name: null } });
    expect(renderReport(r, NOW)).toContain('Available:  not reported yet');
  });

  it('database sizes from the manager metrics, for this cluster only', () => {
    const text = [
      '# HELP etcd_operator_member_database_size_bytes ...',
      'etcd_operator_member_database_size_bytes{namespace="prod",cluster="demo",member="demo-0"} 2048',
      'etcd_operator_member_database_in_use_bytes{namespace="prod",cluster="demo",member="demo-0"} 1024',
      'etcd_operator_member_database_size_bytes{namespace="prod",cluster="other",member="other-0"} 9',
    ].join('\n');
    expect(sizesFromMetrics(text, 'prod', 'demo')).toEqual(new Map([['demo-0', { dbSize: 2048, dbInUse: 1024 }]]));
    expect(sizesFromMetrics('up 1\n', 'prod', 'demo')).toMatch(/reports none/);
  });

  it('sizes and ages as a person reads them', () => {
    expect([bytes(null), bytes(512), bytes(1536), bytes(200 * 1024 * 1024)]).toEqual([
      '-',
      '512 B',
      '1.5 KiB',
      '200 MiB',
    ]);
    expect([ago('2026-11-27T10:09:30Z', NOW), ago('2026-11-27T08:00:00Z', NOW), ago(null, NOW)]).toEqual([
      '30s',
      '2h',
      '-',
    ]);
  });
});
