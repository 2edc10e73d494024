/**
 * The alerting rules for the manager's metrics (docs/metrics.md): one source for the plain rules
 * file promtool reads and the chart's PrometheusRule (`make generate` writes both from here, in
 * charts/etcd-operator/files/). Each alert says what is wrong, with which cluster, and what to do.
 */

/** One alerting rule, as a Prometheus rules file holds it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** How long the expression must hold before the alert fires; absent, at once. */
  readonly for?: string;
  readonly labels: { readonly severity: 'critical' | 'warning' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

const where = '{{ $labels.namespace }}/{{ $labels.cluster }}';
const see = (what: string): string =>
  `kubectl describe etcdcluster -n {{ $labels.namespace }} {{ $labels.cluster }} ${what}`;

/** Every alert, in the order a reader meets trouble: quorum, members, space, steps, backups, the manager. */
export const ALERTS: readonly AlertRule[] = [
  {
    alert: 'EtcdClusterQuorumLost',
    expr: 'etcd_operator_cluster_healthy_voters < etcd_operator_cluster_quorum',
    for: '1m',
    labels: { severity: 'critical' },
    annotations: {
      summary: `etcd cluster ${where} has lost quorum: it can neither read nor write.`,
      description:
        `Only {{ $value }} voting member(s) of ${where} answer; etcd needs a majority of its voters. ` +
        `Requests to this cluster fail until enough members come back. ${see('says which members are down and why')}.`,
    },
  },
  {
    alert: 'EtcdClusterQuorumAtRisk',
    expr:
      'etcd_operator_cluster_healthy_voters == etcd_operator_cluster_quorum' +
      ' and etcd_operator_cluster_healthy_voters < etcd_operator_cluster_voters',
    for: '5m',
    labels: { severity: 'warning' },
    annotations: {
      summary: `etcd cluster ${where} is one member failure away from losing quorum.`,
      description:
        `{{ $value }} voting member(s) of ${where} answer, exactly the majority etcd needs: ` +
        `one more member down stops the cluster. ${see('says which members are down and why')}.`,
    },
  },
  {
    alert: 'EtcdMemberDown',
    expr: 'etcd_operator_member_healthy == 0',
    for: '5m',
    labels: { severity: 'warning' },
    annotations: {
      summary: `etcd member {{ $labels.member }} of ${where} has been down for 5 minutes.`,
      description:
        `The operator's probe of ${where} got no answer from member {{ $labels.member }} for 5 minutes. ` +
        'The operator restarts or replaces a member it can; ' +
        `kubectl describe etcdmember -n {{ $labels.namespace }} {{ $labels.member }} says what it waits for.`,
    },
  },
  {
    alert: 'EtcdNoSpaceAlarm',
    expr: 'etcd_operator_cluster_alarm{alarm="NOSPACE"} == 1',
    labels: { severity: 'critical' },
    annotations: {
      summary: `etcd cluster ${where} ran out of space (NOSPACE): it refuses every write.`,
      description:
        `etcd raised its NOSPACE alarm: the database of ${where} reached its quota (spec.options.quotaBackendBytes). ` +
        'It serves reads and deletes only. Free space (compact and defragment: spec.maintenance.defrag) ' +
        `or raise the quota; the operator disarms the alarm once there is room. ${see('tells how full each member is')}.`,
    },
  },
  {
    alert: 'EtcdDatabaseNearQuota',
    expr:
      'etcd_operator_member_database_size_bytes' +
      ' / on(namespace, cluster) group_left etcd_operator_cluster_quota_backend_bytes > 0.8',
    for: '10m',
    labels: { severity: 'warning' },
    annotations: {
      summary: `etcd member {{ $labels.member }} of ${where} has used over 80% of its database quota.`,
      description:
        `The database of {{ $labels.member }} is at {{ $value | humanizePercentage }} of the quota of ${where}. ` +
        'At 100% etcd raises NOSPACE and refuses writes. Defragment (spec.maintenance.defrag) to give back ' +
        'fragmented space, delete keys, or raise spec.options.quotaBackendBytes.',
    },
  },
  {
    alert: 'EtcdStepPastDeadline',
    expr:
      '(time() - etcd_operator_cluster_step_started_timestamp_seconds > etcd_operator_cluster_progress_deadline_seconds)' +
      ' * on(namespace, cluster) group_left(step) etcd_operator_cluster_step' +
      ' and on(namespace, cluster) etcd_operator_cluster_step_in_flight == 1',
    labels: { severity: 'warning' },
    annotations: {
      summary: `etcd cluster ${where} has been in step {{ $labels.step }} longer than its progress deadline.`,
      description:
        `Step {{ $labels.step }} of ${where} started {{ $value | humanizeDuration }} ago, longer than ` +
        `spec.progressDeadlineSeconds. The operator keeps trying; ${see('says what the step waits for')}, ` +
        '`etcd-operator journal` why.',
    },
  },
  {
    alert: 'EtcdFrequentLeaderChanges',
    expr: 'increase(etcd_operator_cluster_leader_changes_total[1h]) > 3',
    labels: { severity: 'warning' },
    annotations: {
      summary: `etcd cluster ${where} changed leader more than 3 times in the last hour.`,
      description:
        `The operator saw {{ $value | printf "%.0f" }} leader changes in ${where} in an hour (between its probes; ` +
        'it may miss some). Frequent elections slow every request: look for slow disks, a busy network or members ' +
        'restarting.',
    },
  },
  {
    alert: 'EtcdBackupMissing',
    expr:
      'time() - (etcd_operator_schedule_last_success_timestamp_seconds or etcd_operator_schedule_created_timestamp_seconds)' +
      ' > 2 * etcd_operator_schedule_interval_seconds' +
      ' unless on(namespace, cluster, schedule) etcd_operator_schedule_suspended == 1',
    labels: { severity: 'warning' },
    annotations: {
      summary: `No successful snapshot of ${where} by schedule {{ $labels.schedule }} within twice its interval.`,
      description:
        `The last successful snapshot of schedule {{ $labels.schedule }} (cluster ${where}) is ` +
        '{{ $value | humanizeDuration }} old, over twice the time between its runs. ' +
        'kubectl describe etcdsnapshotschedule -n {{ $labels.namespace }} {{ $labels.schedule }} ' +
        'and its failed EtcdSnapshots say why.',
    },
  },
  {
    alert: 'EtcdOperatorNotReconciling',
    expr: 'time() - etcd_operator_object_last_reconcile_timestamp_seconds{kind="EtcdCluster"} > 900',
    labels: { severity: 'warning' },
    annotations: {
      summary:
        'The etcd operator has not finished working EtcdCluster {{ $labels.namespace }}/{{ $labels.name }} for 15 minutes.',
      description:
        'A cluster at rest is worked at least every two minutes; this one last was {{ $value | humanizeDuration }} ago. ' +
        "Its work keeps failing or hangs: the manager's log and etcd_operator_reconcile_errors_total say which.",
    },
  },
];

/** The rules file: one group, evaluated every 30 s. */
export const RULE_GROUPS = {
  groups: [{ name: 'etcd-operator', interval: '30s', rules: ALERTS }],
} as const;
