import { describe, expect, it } from 'vitest';
import { addressing, machineRoute, machineRules, nodeRoutes } from './routes.ts';

describe('real node routes', () => {
  it('node N: its link, its Pod range and its veth', () => {
    expect(addressing(3)).toEqual({
      machine: '10.250.3.1',
      node: '10.250.3.2',
      podCidr: '10.245.3.0/24',
      veth: 'eo-rn3',
    });
    expect(() => addressing(0)).toThrow();
    expect(() => addressing(251)).toThrow();
  });

  it('a node routes the cluster ranges, and only those, through the machine', () => {
    expect(nodeRoutes(2)).toEqual([
      ['route', 'add', '10.245.0.0/16', 'via', '10.250.2.1'],
      ['route', 'add', '10.250.0.0/16', 'via', '10.250.2.1'],
      ['route', 'add', '10.96.0.0/16', 'via', '10.250.2.1'],
    ]);
    expect(nodeRoutes(2).some((r) => r.includes('default'))).toBe(false);
  });

  it('the machine routes each node Pod range to that node', () => {
    expect(machineRoute(1)).toEqual(['route', 'add', '10.245.1.0/24', 'via', '10.250.1.2', 'dev', 'eo-rn1']);
  });

  it('machine table: DNS and registry addresses DNATed to loopback; node traffic forwarded to nodes only', () => {
    const rules = machineRules({ dnsPort: 5353, registryPort: 40000 });
    expect(rules).toContain('iifname "eo-rn*" ip daddr 10.96.0.10 udp dport 53 dnat to 127.0.0.1:5353');
    expect(rules).toContain('iifname "eo-rn*" ip daddr 10.96.0.11 tcp dport 5000 dnat to 127.0.0.1:40000');
    expect(rules).toContain('iifname "eo-rn*" oifname != "eo-rn*" drop');
    expect(rules).toContain('oifname "eo-rn*" ct status dnat masquerade');
    expect(rules.startsWith('table ip eo_rn_machine {}\ndelete table ip eo_rn_machine\n')).toBe(true);
  });
});
