/**
 * The monitoring files `make generate` writes from one source each: the alerting rules
 * (metrics-alerts.ts) as a plain Prometheus rules file, which promtool reads and the chart's
 * PrometheusRule embeds, and the Grafana dashboard (metrics-dashboard.ts) the chart's ConfigMap carries.
 */
import { stringify } from 'yaml';
import { RULE_GROUPS } from './metrics-alerts.ts';
import { grafanaDashboard } from './metrics-dashboard.ts';

/** Where the rules file is, from the repository's root. */
export const RULES_FILE = 'charts/etcd-operator/files/prometheus-rules.yaml';
/** Where the dashboard is, from the repository's root. */
export const DASHBOARD_FILE = 'charts/etcd-operator/files/grafana-dashboard.json';

/** The files, as [path from the repository's root, content]. */
export function renderMonitoringFiles(): [string, string][] {
  const header =
    '# Written by `make generate` from manager/metrics-alerts.ts (docs/metrics.md): edit that, not this.\n';
  return [
    [RULES_FILE, header + stringify(RULE_GROUPS, { lineWidth: 0 })],
    [DASHBOARD_FILE, JSON.stringify(grafanaDashboard(), null, 2) + '\n'],
  ];
}
