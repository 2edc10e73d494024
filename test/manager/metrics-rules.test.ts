/**
 * The alerting rules and the dashboard against the manager's metrics: the files `make generate`
 * writes are fresh, every expression names only metrics the manager exports (read from its
 * exposition), promtool accepts the rules file, and each alert fires in one `promtool test rules`
 * case and stays quiet in another. promtool is the pinned one localcluster/tools/build.sh builds
 * (first time only, several minutes): when it cannot be had, these tests fail.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stringify } from 'yaml';
import { Controller } from '../../manager/controller.ts';
import { JournalKeeper } from '../../manager/journal-keeper.ts';
import { ALERTS, type AlertRule } from '../../manager/metrics-alerts.ts';
import { dashboardQueries, grafanaDashboard } from '../../manager/metrics-dashboard.ts';
import { RULES_FILE, renderMonitoringFiles } from '../../manager/metrics-files.ts';
import { ManagerMetrics } from '../../manager/metrics.ts';
import { binary, run } from '../../localcluster/controlplane/tools.ts';
import { seriesNames } from './exposition.ts';
import { KubeConfig } from '../../effects/kubernetes/kube-config.ts';

const root = path.join(import.meta.dirname, '..', '..');

/** The names of the series a PromQL expression selects (functions, keywords and label names left out). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)]
    .map((m) => m[1]!)
    .filter((n) => !['and', 'or', 'unless', 'bool', 'offset', 'group_left', 'group_right'].includes(n));
}

/** The manager's exposition, with the gauges its controller adds (built, never started). */
function exposition(): string {
  const metrics = new ManagerMetrics();
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'none', server: 'https://127.0.0.1:1' }],
    users: [{ name: 'none' }],
    contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
    currentContext: 'none',
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'metrics-rules-'));
  const log = pino({ level: 'silent' });
  new Controller({
    kubeConfig,
    journal: new JournalKeeper({ path: path.join(dir, 'journal.db'), log, metrics }),
    log,
    metrics,
    etcdAddress: 'dns',
    identity: 'test',
  });
  rmSync(dir, { recursive: true, force: true });
  return metrics.render();
}

describe('alerting rules and dashboard: the metrics they name', () => {
  const text = exposition();
  const exported = seriesNames(text);

  test('reconcile errors are there at 0 per kind before any failure, so their rate reads 0, not "No data"', () => {
    for (const kind of ['EtcdCluster', 'EtcdMember', 'EtcdSnapshot', 'EtcdSnapshotSchedule'])
      expect(text.split('\n')).toContain(`etcd_operator_reconcile_errors_total{kind="${kind}"} 0`);
  });

  test('the rules file and the dashboard are as make generate writes them', () => {
    for (const [file, content] of renderMonitoringFiles())
      expect(readFileSync(path.join(root, file), 'utf8'), `${file} is stale: run make generate`).toBe(content);
  });

  test('every alert expression names only metrics the manager exports', () => {
    for (const rule of ALERTS) {
      const names = metricNames(rule.expr);
      expect(names.length, rule.alert).toBeGreaterThan(0);
      for (const name of names) expect(exported, `${rule.alert}: ${name}`).toContain(name);
    }
  });

  test('every dashboard query and variable names only metrics the manager exports', () => {
    const variables = JSON.stringify(grafanaDashboard()).match(/label_values\((\w+)/g) ?? [];
    expect(variables.length).toBeGreaterThan(0);
    for (const v of variables) expect(exported).toContain(v.slice('label_values('.length));
    for (const q of dashboardQueries()) {
      const names = metricNames(q.expr);
      expect(names.length, q.panel).toBeGreaterThan(0);
      for (const name of names) expect(exported, `${q.panel}: ${name}`).toContain(name);
    }
  });

  test('docs/metrics.md names every metric the manager exports, and none it does not', () => {
    const doc = readFileSync(path.join(root, 'docs', 'metrics.md'), 'utf8');
    const families = [...new Set([...exported].map((n) => n.replace(/_(bucket|sum|count)$/, '')))].filter((n) =>
      exported.has(n),
    );
    for (const name of families) expect(doc, name).toContain(`\`${name}`);
    for (const [, name] of doc.matchAll(/`((?:etcd_operator|process|nodejs)_[a-z0-9_]+)/g))
      expect(exported, `docs/metrics.md: ${name}`).toContain(name);
  });

  test('the names are read from expressions as PromQL reads them', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (kind, le) (rate(etcd_operator_intent_duration_seconds_bucket{a="b"}[5m])))',
      ),
    ).toEqual(['etcd_operator_intent_duration_seconds_bucket']);
    expect(metricNames('a / on(namespace, cluster) group_left b > 0.8 unless c == 1')).toEqual(['a', 'b', 'c']);
  });
});

/** One promtool case: series over time, and at eval time each alert that must fire (its value) or stay quiet. */
interface Case {
  readonly name: string;
  readonly series: Readonly<Record<string, string>>;
  readonly evalAt: string;
  /** The alert and, when it fires, the labels it carries and how its value reads in the annotations. */
  readonly alert: string;
  readonly fires?: { readonly labels: Readonly<Record<string, string>>; readonly value: string };
}

const at = 'namespace="prod", cluster="demo"';
const prod = { namespace: 'prod', cluster: 'demo' };
const healthy = (voters: number, quorum: number, up: number) => ({
  [`etcd_operator_cluster_voters{${at}}`]: `${voters}x20`,
  [`etcd_operator_cluster_quorum{${at}}`]: `${quorum}x20`,
  [`etcd_operator_cluster_healthy_voters{${at}}`]: `${up}x20`,
});
const step = (inFlight: number) => ({
  [`etcd_operator_cluster_step_started_timestamp_seconds{${at}}`]: '0x20',
  [`etcd_operator_cluster_progress_deadline_seconds{${at}}`]: '600x20',
  [`etcd_operator_cluster_step_in_flight{${at}}`]: `${inFlight}x20`,
  [`etcd_operator_cluster_step{${at}, step="${inFlight ? 'ScalingUp' : 'Steady'}"}`]: '1x20',
});
const schedule = (s: string) => `${at}, schedule="${s}"`;
const backups = (lastSuccess: string | null, suspended: number) => ({
  [`etcd_operator_schedule_interval_seconds{${schedule('hourly')}}`]: '3600x200',
  [`etcd_operator_schedule_created_timestamp_seconds{${schedule('hourly')}}`]: '0x200',
  [`etcd_operator_schedule_suspended{${schedule('hourly')}}`]: `${suspended}x200`,
  ...(lastSuccess
    ? { [`etcd_operator_schedule_last_success_timestamp_seconds{${schedule('hourly')}}`]: lastSuccess }
    : {}),
});

const CASES: readonly Case[] = [
  {
    name: '1 of 3 voters answers',
    series: healthy(3, 2, 1),
    evalAt: '5m',
    alert: 'EtcdClusterQuorumLost',
    fires: { labels: prod, value: '1' },
  },
  { name: '3 of 3 voters answer', series: healthy(3, 2, 3), evalAt: '5m', alert: 'EtcdClusterQuorumLost' },
  {
    name: '2 of 3 voters answer for 10 minutes',
    series: healthy(3, 2, 2),
    evalAt: '10m',
    alert: 'EtcdClusterQuorumAtRisk',
    fires: { labels: prod, value: '2' },
  },
  {
    name: 'both voters of a 2-member cluster answer',
    series: healthy(2, 2, 2),
    evalAt: '10m',
    alert: 'EtcdClusterQuorumAtRisk',
  },
  {
    name: 'a member silent for 8 minutes',
    series: { [`etcd_operator_member_healthy{${at}, member="demo-1"}`]: '1 1 0x10' },
    evalAt: '10m',
    alert: 'EtcdMemberDown',
    fires: { labels: { ...prod, member: 'demo-1' }, value: '0' },
  },
  {
    name: 'a member silent for 2 minutes',
    series: { [`etcd_operator_member_healthy{${at}, member="demo-1"}`]: '1x7 0 0' },
    evalAt: '9m',
    alert: 'EtcdMemberDown',
  },
  {
    name: 'NOSPACE raised',
    series: { [`etcd_operator_cluster_alarm{${at}, alarm="NOSPACE"}`]: '0 1x5' },
    evalAt: '3m',
    alert: 'EtcdNoSpaceAlarm',
    fires: { labels: { ...prod, alarm: 'NOSPACE' }, value: '1' },
  },
  {
    name: 'no alarm raised',
    series: {
      [`etcd_operator_cluster_alarm{${at}, alarm="NOSPACE"}`]: '0x5',
      [`etcd_operator_cluster_alarm{${at}, alarm="CORRUPT"}`]: '0x5',
    },
    evalAt: '3m',
    alert: 'EtcdNoSpaceAlarm',
  },
  {
    name: 'a database at 90% of its quota',
    series: {
      [`etcd_operator_member_database_size_bytes{${at}, member="demo-0"}`]: '900x20',
      [`etcd_operator_cluster_quota_backend_bytes{${at}}`]: '1000x20',
    },
    evalAt: '15m',
    alert: 'EtcdDatabaseNearQuota',
    fires: { labels: { ...prod, member: 'demo-0' }, value: '90%' },
  },
  {
    name: 'a database at 70% of its quota',
    series: {
      [`etcd_operator_member_database_size_bytes{${at}, member="demo-0"}`]: '700x20',
      [`etcd_operator_cluster_quota_backend_bytes{${at}}`]: '1000x20',
    },
    evalAt: '15m',
    alert: 'EtcdDatabaseNearQuota',
  },
  {
    name: 'a step in flight for 15 minutes, deadline 10',
    series: step(1),
    evalAt: '15m',
    alert: 'EtcdStepPastDeadline',
    fires: { labels: { ...prod, step: 'ScalingUp' }, value: '15m 0s' },
  },
  { name: 'a cluster at rest for 15 minutes', series: step(0), evalAt: '15m', alert: 'EtcdStepPastDeadline' },
  {
    name: '5 leader changes in half an hour',
    series: { [`etcd_operator_cluster_leader_changes_total{${at}}`]: '0 1 2 3 4 5x40' },
    evalAt: '30m',
    alert: 'EtcdFrequentLeaderChanges',
    fires: { labels: prod, value: '5' },
  },
  {
    name: '2 leader changes in half an hour',
    series: { [`etcd_operator_cluster_leader_changes_total{${at}}`]: '0 1 2x40' },
    evalAt: '30m',
    alert: 'EtcdFrequentLeaderChanges',
  },
  {
    name: 'an hourly schedule with no success in 3 hours',
    series: backups(null, 0),
    evalAt: '3h',
    alert: 'EtcdBackupMissing',
    fires: { labels: { ...prod, schedule: 'hourly' }, value: '3h 0m 0s' },
  },
  {
    name: 'an hourly schedule that succeeded 30 minutes ago',
    series: backups('9000x200', 0),
    evalAt: '3h',
    alert: 'EtcdBackupMissing',
  },
  { name: 'a suspended hourly schedule', series: backups(null, 1), evalAt: '3h', alert: 'EtcdBackupMissing' },
  {
    name: 'a cluster not worked for 20 minutes',
    series: {
      [`etcd_operator_object_last_reconcile_timestamp_seconds{kind="EtcdCluster", namespace="prod", name="demo"}`]:
        '0x30',
    },
    evalAt: '20m',
    alert: 'EtcdOperatorNotReconciling',
    fires: { labels: { kind: 'EtcdCluster', namespace: 'prod', name: 'demo' }, value: '20m 0s' },
  },
  {
    name: 'a cluster worked every minute',
    series: {
      [`etcd_operator_object_last_reconcile_timestamp_seconds{kind="EtcdCluster", namespace="prod", name="demo"}`]:
        '0+60x30',
    },
    evalAt: '20m',
    alert: 'EtcdOperatorNotReconciling',
  },
];

/** An annotation as Prometheus renders it for these labels, `value` standing for the value however it is formatted. */
function rendered(template: string, labels: Readonly<Record<string, string>>, value: string): string {
  return template
    .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, l: string) => labels[l] ?? '')
    .replace(/\{\{ \$value[^}]*\}\}/g, value);
}

/** The promtool test of one case. */
function promtoolTest(c: Case, rule: AlertRule): object {
  return {
    name: c.name,
    interval: '1m',
    input_series: Object.entries(c.series).map(([series, values]) => ({ series, values })),
    alert_rule_test: [
      {
        eval_time: c.evalAt,
        alertname: c.alert,
        exp_alerts: c.fires
          ? [
              {
                exp_labels: { ...c.fires.labels, severity: rule.labels.severity },
                exp_annotations: {
                  summary: rendered(rule.annotations.summary, c.fires.labels, c.fires.value),
                  description: rendered(rule.annotations.description, c.fires.labels, c.fires.value),
                },
              },
            ]
          : [],
      },
    ],
  };
}

describe('alerting rules: promtool', () => {
  let promtool: string;
  let dir: string;
  // Built from Go modules the first time (several minutes on two cores).
  beforeAll(async () => {
    promtool = await binary('promtool');
    dir = mkdtempSync(path.join(tmpdir(), 'promtool-'));
  }, 1_800_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('promtool check rules accepts the rules file', async () => {
    const out = await run(promtool, ['check', 'rules', path.join(root, RULES_FILE)]);
    expect(out).toContain(`SUCCESS: ${ALERTS.length} rules found`);
  });

  test('each alert fires in one case and stays quiet in another', async () => {
    for (const rule of ALERTS) {
      const cases = CASES.filter((c) => c.alert === rule.alert);
      expect(cases.filter((c) => c.fires).length, `${rule.alert} fires in a case`).toBeGreaterThan(0);
      expect(cases.filter((c) => !c.fires).length, `${rule.alert} is quiet in a case`).toBeGreaterThan(0);
    }
    const file = path.join(dir, 'tests.yaml');
    writeFileSync(
      file,
      stringify(
        {
          rule_files: [path.join(root, RULES_FILE)],
          evaluation_interval: '30s',
          tests: CASES.map((c) =>
            promtoolTest(
              c,
              ALERTS.find((r) => r.alert === c.alert)!,
            ),
          ),
        },
        { lineWidth: 0 },
      ),
    );
    const out = await run(promtool, ['test', 'rules', file], 120_000);
    expect(out).toContain('SUCCESS');
  });
});
