import { describe, expect, it } from 'vitest';
import { ManagerMetrics } from '../../manager/metrics.ts';

describe('manager metrics', () => {
  it('renders counters, gauges and histograms in the Prometheus text format', () => {
    const m = new ManagerMetrics();
    m.steps.inc({ machine: 'cluster', to: 'steady' });
    m.steps.inc({ machine: 'cluster', to: 'steady' });
    m.intents.inc({ kind: 'addLearner', result: 'failed' });
    m.eventToIntentSeconds.observe(0.003);
    m.eventToIntentSeconds.observe(0.2);
    m.gauge('etcd_operator_queue_depth', 'Keys waiting.', () => 7);
    const text = m.render();
    expect(text).toContain('# TYPE etcd_operator_steps_total counter');
    expect(text).toContain('etcd_operator_steps_total{machine="cluster",to="steady"} 2');
    expect(text).toContain('etcd_operator_intents_total{kind="addLearner",result="failed"} 1');
    expect(text).toContain('etcd_operator_event_to_intent_seconds_bucket{le="0.0025"} 0');
    expect(text).toContain('etcd_operator_event_to_intent_seconds_bucket{le="0.005"} 1');
    expect(text).toContain('etcd_operator_event_to_intent_seconds_bucket{le="+Inf"} 2');
    expect(text).toContain('etcd_operator_event_to_intent_seconds_count 2');
    expect(text).toContain('etcd_operator_queue_depth 7');
  });

  it('escapes label values', () => {
    const m = new ManagerMetrics();
    m.errors.inc({ kind: 'a"b\\c' });
    expect(m.render()).toContain('etcd_operator_reconcile_errors_total{kind="a\\"b\\\\c"} 1');
  });

  it("shows the process's resident memory and the V8 heap's used and committed size", () => {
    const text = new ManagerMetrics().render();
    for (const name of [
      'process_resident_memory_bytes',
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_external_memory_bytes',
    ])
      expect(Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1])).toBeGreaterThan(0);
  });
});
