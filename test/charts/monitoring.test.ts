/**
 * The chart's monitoring, rendered by the real Helm: a ServiceMonitor, a PrometheusRule and a
 * Grafana dashboard ConfigMap, each off until asked for; the rules and the dashboard the same as
 * the files `make generate` writes (the plain rules file promtool reads).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { DASHBOARD_FILE, RULES_FILE } from '../../manager/metrics-files.ts';
import { renderChart, type KubeObject } from './helm.ts';

const root = path.join(import.meta.dirname, '..', '..');
const all = {
  'metrics.serviceMonitor.enabled': 'true',
  'metrics.prometheusRule.enabled': 'true',
  'metrics.dashboard.enabled': 'true',
};
const kinds = (objects: readonly KubeObject[]) => objects.map((o) => o.kind);

describe('chart: monitoring', () => {
  test('the default install makes no ServiceMonitor, PrometheusRule or dashboard', async () => {
    const objects = await renderChart();
    expect(kinds(objects)).not.toContain('ServiceMonitor');
    expect(kinds(objects)).not.toContain('PrometheusRule');
    expect(objects.filter((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-dashboard'))).toEqual([]);
  });

  test("the ServiceMonitor scrapes /metrics through the metrics Service's port, with the labels asked for", async () => {
    const objects = await renderChart({ ...all, 'metrics.serviceMonitor.labels.release': 'prometheus' });
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor') as KubeObject & {
      spec: { endpoints: unknown[]; selector: { matchLabels: Record<string, string> } };
    };
    const service = objects.find((o) => o.kind === 'Service' && o.metadata.name.endsWith('-metrics')) as KubeObject & {
      spec: { ports: { name: string }[] };
    };
    expect((monitor.metadata.labels as Record<string, string>).release).toBe('prometheus');
    expect(monitor.spec.endpoints).toEqual([{ port: 'http-metrics', path: '/metrics', interval: '30s' }]);
    expect(service.spec.ports.map((p) => p.name)).toContain('http-metrics');
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels))
      expect((service.metadata.labels as Record<string, string>)[k]).toBe(v);
  });

  test('a ServiceMonitor without the metrics Service is refused with what to set', async () => {
    await expect(renderChart({ ...all, 'metrics.service.enabled': 'false' })).rejects.toThrow(
      /set metrics.service.enabled too/,
    );
  });

  test('the PrometheusRule holds the rules of the plain rules file', async () => {
    const rule = (await renderChart(all)).find((o) => o.kind === 'PrometheusRule') as KubeObject & { spec: unknown };
    expect(rule.spec).toEqual(parse(readFileSync(path.join(root, RULES_FILE), 'utf8')));
  });

  test("the dashboard ConfigMap carries Grafana's sidecar label and the dashboard file", async () => {
    const objects = await renderChart({ ...all, 'metrics.dashboard.namespace': 'monitoring' });
    const map = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-dashboard')) as KubeObject & {
      data: Record<string, string>;
    };
    expect((map.metadata.labels as Record<string, string>).grafana_dashboard).toBe('1');
    expect(map.metadata.namespace).toBe('monitoring');
    expect(JSON.parse(map.data['etcd-operator.json']!)).toEqual(
      JSON.parse(readFileSync(path.join(root, DASHBOARD_FILE), 'utf8')),
    );
  });
});
