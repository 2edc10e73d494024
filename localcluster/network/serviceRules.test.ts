import { describe, expect, it } from 'vitest';
import { renderServiceRules } from './serviceRules.ts';

describe('service rules', () => {
  it('DNATs a ClusterIP port to its one endpoint, or to each of several in turn, from Pods and from the host', () => {
    const script = renderServiceRules('t', [
      { service: 'ns/one:80', ip: '10.96.0.5', port: 80, targets: [{ ip: '10.244.0.2', port: 8080 }] },
      {
        service: 'ns/two:2379',
        ip: '10.96.0.6',
        port: 2379,
        targets: [
          { ip: '10.244.0.3', port: 2379 },
          { ip: '10.244.1.4', port: 2379 },
        ],
      },
      { service: 'ns/none:80', ip: '10.96.0.7', port: 80, targets: [] },
    ]);
    expect(script).toContain('ip daddr 10.96.0.5 tcp dport 80 dnat to 10.244.0.2:8080');
    expect(script).toContain(
      'ip daddr 10.96.0.6 tcp dport 2379 dnat ip to numgen inc mod 2 map { 0 : 10.244.0.3 . 2379, 1 : 10.244.1.4 . 2379 }',
    );
    expect(script).not.toContain('10.96.0.7');
    expect(script).toMatch(
      /chain prerouting \{\n\s+type nat hook prerouting priority -100; policy accept;\n\s+jump services/,
    );
    expect(script).toMatch(/chain output \{\n\s+type nat hook output priority -100; policy accept;\n\s+jump services/);
    expect(script.startsWith('table ip t {}\ndelete table ip t\n')).toBe(true);
  });
});
