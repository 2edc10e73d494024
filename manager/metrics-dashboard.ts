/**
 * The Grafana dashboard of the manager's metrics (docs/metrics.md), as data: `make generate` writes
 * it to charts/etcd-operator/files/grafana-dashboard.json, which the chart ships in a ConfigMap for
 * Grafana's sidecar. One row per question a reader asks: is the cluster whole, is it full, what is
 * the operator doing, are backups taken, is the manager well.
 */

/** One query of a panel: its PromQL and the legend of its series. */
export interface PanelQuery {
  readonly expr: string;
  readonly legend: string;
}

/** One panel: a time series (the default) or a stat, with its unit. */
export interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly unit?: string;
  readonly type?: 'timeseries' | 'stat';
  readonly queries: readonly PanelQuery[];
}

const c = 'namespace="$namespace", cluster=~"$cluster"';

/** The rows and their panels, top to bottom. */
export const DASHBOARD_ROWS: readonly { readonly title: string; readonly panels: readonly PanelSpec[] }[] = [
  {
    title: 'Members and quorum',
    panels: [
      {
        title: 'Members',
        description: 'Voting members asked for, ready (voters, healthy and ready), voters and learners in etcd.',
        queries: [
          { expr: `etcd_operator_cluster_members_desired{${c}}`, legend: '{{cluster}} desired' },
          { expr: `etcd_operator_cluster_members_ready{${c}}`, legend: '{{cluster}} ready' },
          { expr: `etcd_operator_cluster_voters{${c}}`, legend: '{{cluster}} voters' },
          { expr: `etcd_operator_cluster_learners{${c}}`, legend: '{{cluster}} learners' },
        ],
      },
      {
        title: 'Quorum',
        description: 'Voters that answer against the majority etcd needs: below the line, the cluster stops.',
        queries: [
          { expr: `etcd_operator_cluster_healthy_voters{${c}}`, legend: '{{cluster}} healthy voters' },
          { expr: `etcd_operator_cluster_quorum{${c}}`, legend: '{{cluster}} quorum' },
        ],
      },
      {
        title: 'Member health',
        description: 'Each member: 1 while it answers the probe, 0 when down.',
        queries: [{ expr: `etcd_operator_member_healthy{${c}}`, legend: '{{member}}' }],
      },
      {
        title: 'Leader changes (1h)',
        description: 'Changes of leader the probes saw in the last hour, and which member leads.',
        queries: [
          { expr: `increase(etcd_operator_cluster_leader_changes_total{${c}}[1h])`, legend: '{{cluster}} changes' },
          { expr: `etcd_operator_member_is_leader{${c}} == 1`, legend: '{{member}} leads' },
        ],
      },
    ],
  },
  {
    title: 'Space',
    panels: [
      {
        title: 'Database size',
        description: "Each member's database file (allocated) and the bytes holding data, under the quota.",
        unit: 'bytes',
        queries: [
          { expr: `etcd_operator_member_database_size_bytes{${c}}`, legend: '{{member}} size' },
          { expr: `etcd_operator_member_database_in_use_bytes{${c}}`, legend: '{{member}} in use' },
          { expr: `etcd_operator_cluster_quota_backend_bytes{${c}}`, legend: '{{cluster}} quota' },
        ],
      },
      {
        title: 'Quota used',
        description: "The largest member's database over the quota: at 100% etcd raises NOSPACE.",
        unit: 'percentunit',
        type: 'stat',
        queries: [
          {
            expr:
              `max by (namespace, cluster) (etcd_operator_member_database_size_bytes{${c}})` +
              ` / on(namespace, cluster) max by (namespace, cluster) (etcd_operator_cluster_quota_backend_bytes{${c}})`,
            legend: '{{cluster}}',
          },
        ],
      },
      {
        title: 'Alarms',
        description: "etcd's alarms: 1 while raised.",
        type: 'stat',
        queries: [{ expr: `etcd_operator_cluster_alarm{${c}}`, legend: '{{cluster}} {{alarm}}' }],
      },
    ],
  },
  {
    title: 'Steps',
    panels: [
      {
        title: 'Step in flight',
        description: 'The current step of each cluster (1 while it is the current one).',
        queries: [{ expr: `etcd_operator_cluster_step{${c}} == 1`, legend: '{{cluster}} {{step}}' }],
      },
      {
        title: 'Step age',
        description: 'How long the step in flight has run, against the progress deadline.',
        unit: 's',
        queries: [
          {
            expr:
              `(time() - etcd_operator_cluster_step_started_timestamp_seconds{${c}})` +
              ` * etcd_operator_cluster_step_in_flight{${c}}`,
            legend: '{{cluster}} step age',
          },
          { expr: `etcd_operator_cluster_progress_deadline_seconds{${c}}`, legend: '{{cluster}} deadline' },
        ],
      },
      {
        title: 'Steps ended (1h)',
        description: 'Steps every machine left in the last hour, by step and outcome (all clusters).',
        queries: [
          {
            expr: 'sum by (machine, step, outcome) (increase(etcd_operator_steps_ended_total[1h]))',
            legend: '{{machine}} {{step}} {{outcome}}',
          },
        ],
      },
      {
        title: 'Effects',
        description: 'Intents carried out per second, by kind and result, and failures by error code.',
        queries: [
          { expr: 'sum by (kind, result) (rate(etcd_operator_intents_total[5m]))', legend: '{{kind}} {{result}}' },
          {
            expr: 'sum by (kind, code) (rate(etcd_operator_intent_failures_total[5m]))',
            legend: '{{kind}} {{code}}',
          },
        ],
      },
      {
        title: 'Effect duration (p95)',
        description: 'How long effect handlers take, by intent kind.',
        unit: 's',
        queries: [
          {
            expr: 'histogram_quantile(0.95, sum by (kind, le) (rate(etcd_operator_intent_duration_seconds_bucket[5m])))',
            legend: '{{kind}}',
          },
        ],
      },
    ],
  },
  {
    title: 'Backups',
    panels: [
      {
        title: 'Since the last successful snapshot',
        description: 'Per schedule, against twice its interval (the backup alert fires above it).',
        unit: 's',
        queries: [
          {
            expr: `time() - etcd_operator_snapshot_last_success_timestamp_seconds{${c}}`,
            legend: '{{cluster}} {{schedule}}',
          },
          { expr: `2 * etcd_operator_schedule_interval_seconds{${c}}`, legend: '{{schedule}} twice the interval' },
        ],
      },
      {
        title: 'Last snapshot size',
        description: 'The size of the newest successful snapshot, per schedule.',
        unit: 'bytes',
        queries: [{ expr: `etcd_operator_snapshot_last_success_size_bytes{${c}}`, legend: '{{cluster}} {{schedule}}' }],
      },
    ],
  },
  {
    title: 'The manager',
    panels: [
      {
        title: 'Since the last reconcile',
        description: "How long ago each EtcdCluster's work last ended well (at rest, at most about two minutes).",
        unit: 's',
        queries: [
          {
            expr: `time() - etcd_operator_object_last_reconcile_timestamp_seconds{kind="EtcdCluster", namespace="$namespace", name=~"$cluster"}`,
            legend: '{{name}}',
          },
        ],
      },
      {
        title: 'Work queue and errors',
        description: 'Keys waiting or worked on, and reconciles that failed (retried with back-off).',
        queries: [
          { expr: 'etcd_operator_queue_depth', legend: 'queue depth' },
          { expr: 'sum by (kind) (rate(etcd_operator_reconcile_errors_total[5m]))', legend: '{{kind}} errors/s' },
        ],
      },
      {
        title: 'Journal write (p99)',
        description: 'How long a journal write transaction takes (it is durable before any effect runs).',
        unit: 's',
        queries: [
          {
            expr: 'histogram_quantile(0.99, sum by (le) (rate(etcd_operator_journal_write_seconds_bucket[5m])))',
            legend: 'p99',
          },
        ],
      },
      {
        title: 'Memory and CPU',
        description: 'The manager process: resident memory, V8 heap used, CPU seconds per second.',
        unit: 'bytes',
        queries: [
          { expr: 'process_resident_memory_bytes', legend: '{{instance}} resident' },
          { expr: 'nodejs_heap_size_used_bytes', legend: '{{instance}} heap used' },
        ],
      },
      {
        title: 'CPU',
        description: 'CPU seconds the manager used per second.',
        queries: [{ expr: 'rate(process_cpu_seconds_total[5m])', legend: '{{instance}}' }],
      },
    ],
  },
];

/** Every query of the dashboard, with its panel's title. */
export const dashboardQueries = (): { readonly panel: string; readonly expr: string }[] =>
  DASHBOARD_ROWS.flatMap((r) => r.panels.flatMap((p) => p.queries.map((q) => ({ panel: p.title, expr: q.expr }))));

const WIDTH = 24;
const HEIGHT = 8;

/** The dashboard as Grafana's JSON model: a datasource, namespace and cluster variables, rows of panels. */
export function grafanaDashboard(): object {
  const panels: object[] = [];
  let id = 1;
  let y = 0;
  for (const row of DASHBOARD_ROWS) {
    panels.push({ id: id++, type: 'row', title: row.title, collapsed: false, gridPos: { h: 1, w: WIDTH, x: 0, y } });
    y += 1;
    const w = Math.max(6, Math.floor(WIDTH / Math.min(row.panels.length, 4)));
    row.panels.forEach((p, i) => {
      const x = (i * w) % WIDTH;
      if (i > 0 && x === 0) y += HEIGHT;
      panels.push({
        id: id++,
        type: p.type ?? 'timeseries',
        title: p.title,
        description: p.description,
        datasource: { type: 'prometheus', uid: '${datasource}' },
        gridPos: { h: HEIGHT, w, x, y },
        fieldConfig: { defaults: { unit: p.unit ?? 'short' }, overrides: [] },
        options: {},
        targets: p.queries.map((q, j) => ({
          refId: String.fromCharCode(65 + j),
          datasource: { type: 'prometheus', uid: '${datasource}' },
          expr: q.expr,
          legendFormat: q.legend,
        })),
      });
    });
    y += HEIGHT;
  }
  const variable = (name: string, label: string, query: string, multi: boolean): object => ({
    name,
    label,
    type: 'query',
    datasource: { type: 'prometheus', uid: '${datasource}' },
    query: { query, refId: name },
    definition: query,
    refresh: 2,
    includeAll: multi,
    multi,
    ...(multi ? { allValue: '.*' } : {}),
    sort: 1,
  });
  return {
    uid: 'etcd-operator',
    title: 'etcd operator',
    description: 'etcd clusters run by etcd-operator: members, quorum, space, steps, backups and the manager.',
    tags: ['etcd', 'etcd-operator'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus' },
        variable('namespace', 'Namespace', 'label_values(etcd_operator_cluster_members_desired, namespace)', false),
        variable(
          'cluster',
          'Cluster',
          'label_values(etcd_operator_cluster_members_desired{namespace="$namespace"}, cluster)',
          true,
        ),
      ],
    },
    panels,
  };
}
