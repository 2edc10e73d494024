import { describe, expect, it } from 'vitest';
import { crossingConnections, parseTcp, podOfProcess } from './procs.ts';
import type { Proc, TcpSocket } from './procs.ts';
import { renderRules } from './rules.ts';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:C350 0107007F:094C 01 00000000:00000000 00:00000000 00000000     0        0 1002 1 0000000000000000 20 4 30 10 -1
`;

const sock = (inode: string, l: string, lp: number, r: string, rp: number, state = 1): TcpSocket => ({
  inode,
  localIP: l,
  localPort: lp,
  remoteIP: r,
  remotePort: rp,
  state,
});

describe('/proc reading', () => {
  it('reads addresses, ports, states and inodes from /proc/net/tcp', () => {
    expect(parseTcp(TCP)).toEqual([
      sock('1001', '127.0.0.1', 8080, '0.0.0.0', 0, 10),
      sock('1002', '127.0.0.1', 50000, '127.0.7.1', 2380, 1),
    ]);
  });

  it('gives a process the Pod whose address a process of its mount namespace listens on', () => {
    const procs: Proc[] = [
      { pid: 10, sockets: new Set(['s1']), mountNs: 'mnt:[1]' },
      { pid: 11, sockets: new Set(), mountNs: 'mnt:[1]' },
      { pid: 20, sockets: new Set(['s2']), mountNs: 'mnt:[host]' },
    ];
    const sockets = [sock('s1', '127.0.7.1', 2380, '0.0.0.0', 0, 10), sock('s2', '127.0.7.2', 1, '0.0.0.0', 0, 10)];
    const pods = podOfProcess(procs, sockets, new Set(['127.0.7.1', '127.0.7.2']), 'mnt:[host]');
    expect([...pods]).toEqual([
      [10, '127.0.7.1'],
      [11, '127.0.7.1'],
    ]);
  });

  it('cuts connections between an isolated Pod and another Pod, in both directions, but not the host', () => {
    const procs: Proc[] = [
      { pid: 1, sockets: new Set(['a-out']), mountNs: 'a' },
      { pid: 2, sockets: new Set(['b-in']), mountNs: 'b' },
      { pid: 3, sockets: new Set(['host-out']), mountNs: 'host' },
    ];
    const sockets = [
      sock('a-out', '127.0.0.1', 40000, '127.0.7.2', 2380),
      sock('b-in', '127.0.7.2', 2380, '127.0.0.1', 40000),
      sock('host-out', '127.0.0.1', 40001, '127.0.7.1', 2379),
      sock('a-in', '127.0.7.1', 2379, '127.0.0.1', 40001),
    ];
    const podOf = new Map([
      [1, '127.0.7.1'],
      [2, '127.0.7.2'],
    ]);
    const pods = new Set(['127.0.7.1', '127.0.7.2']);
    expect(crossingConnections(sockets, procs, podOf, pods, new Set(['127.0.7.1']))).toEqual([
      { srcIP: '127.0.0.1', srcPort: 40000, dstIP: '127.0.7.2', dstPort: 2380 },
      { srcIP: '127.0.7.2', srcPort: 2380, dstIP: '127.0.0.1', dstPort: 40000 },
    ]);
    expect(crossingConnections(sockets, procs, podOf, pods, new Set())).toEqual([]);
  });
});

describe('isolation rules', () => {
  it('drop traffic of an isolated address except with itself and the host', () => {
    const text = renderRules({ table: 't', isolated: ['127.0.7.1'], host: ['127.0.0.1', '127.96.0.1'], cut: [] });
    expect(text).toContain('ip saddr 127.0.7.1 ip daddr 127.0.7.1 accept');
    expect(text).toContain('ip saddr 127.0.7.1 ip daddr != { 127.0.0.1, 127.96.0.1 } drop');
    expect(text).toContain('ip daddr 127.0.7.1 ip saddr != { 127.0.0.1, 127.96.0.1 } drop');
    expect(text).not.toContain('cgroupv2');
  });
});
