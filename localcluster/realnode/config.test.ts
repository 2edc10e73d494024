import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  cniConfig,
  containerdConfig,
  defaultRegistryHosts,
  kubeletConfig,
  mirrorReference,
  registryHosts,
} from './config.ts';

describe('real node config', () => {
  it("CNI: a bridge gateway for the node Pod range, Pods routing all through the node, IPs kept on the node's disk", () => {
    const conf = JSON.parse(cniConfig('10.245.2.0/24', '/n/cni/ipam')) as {
      plugins: { type: string; ipam?: unknown }[];
    };
    expect(conf.plugins.map((p) => p.type)).toEqual(['bridge', 'portmap']);
    expect(conf.plugins[0]!.ipam).toEqual({
      type: 'host-local',
      dataDir: '/n/cni/ipam',
      ranges: [[{ subnet: '10.245.2.0/24' }]],
      routes: [{ dst: '0.0.0.0/0' }],
    });
  });

  const ctrd = {
    root: '/n/containerd',
    socket: '/run/containerd/containerd.sock',
    sandboxImage: 'registry.k8s.io/pause:3.10.1',
    runc: '/c/runc',
    cniBinDir: '/c/cni',
    cniConfDir: '/n/cni',
  };

  it('containerd: names the registry hosts dir only when given', () => {
    expect(containerdConfig(ctrd)).not.toContain('config_path');
    const text = containerdConfig({ ...ctrd, registryHostsDir: '/n/hosts' });
    expect(text).toContain('[plugins.\'io.containerd.cri.v1.images\'.registry]\n  config_path = "/n/hosts"');
    expect(text).toContain('BinaryName = "/c/runc"');
    expect(text).toContain('restrict_oom_score_adj = true');
  });

  it('kubelet: cgroupfs on v1, the cluster DNS when given', () => {
    const base = {
      cgroupRoot: '/etcd-operator-node-a',
      socket: '/run/containerd/containerd.sock',
      address: '10.250.1.2',
      podCidr: '10.245.1.0/24',
      tlsCertFile: 'c',
      tlsPrivateKeyFile: 'k',
      clientCAFile: 'ca',
    };
    const without = parse(kubeletConfig(base)) as Record<string, unknown>;
    expect(without).toMatchObject({ cgroupDriver: 'cgroupfs', failCgroupV1: false, podCIDR: '10.245.1.0/24' });
    expect(without.clusterDNS).toBeUndefined();
    expect(parse(kubeletConfig({ ...base, clusterDNS: '10.96.0.10' }))).toMatchObject({
      clusterDNS: ['10.96.0.10'],
      clusterDomain: 'cluster.local',
    });
    expect(without.registerWithTaints).toBeUndefined();
    const taint = { key: 'etcd-operator.test/private', effect: 'NoSchedule' };
    expect(parse(kubeletConfig({ ...base, taints: [taint] }))).toMatchObject({ registerWithTaints: [taint] });
  });

  it('registry hosts: the upstream name kept as the first path segment on the mirror', () => {
    expect(registryHosts('quay.io', 'http://10.96.0.11:5000')).toBe(
      [
        'server = "https://quay.io"',
        '',
        '[host."http://10.96.0.11:5000/v2/quay.io"]',
        '  capabilities = ["pull", "resolve"]',
        '  override_path = true',
        '',
      ].join('\n'),
    );
    expect(mirrorReference('127.0.0.1:5000', 'quay.io/coreos/etcd:v3.6.16')).toBe(
      '127.0.0.1:5000/quay.io/coreos/etcd:v3.6.16',
    );
    expect(mirrorReference('127.0.0.1:5000', 'busybox:1.36')).toBe('127.0.0.1:5000/docker.io/busybox:1.36');
    expect(mirrorReference('h:1', 'versity/versitygw:v1.8.0')).toBe('h:1/docker.io/versity/versitygw:v1.8.0');
  });

  it('registry hosts of any other name: the mirror at the same path, no upstream named', () => {
    expect(defaultRegistryHosts('http://10.96.0.11:5000')).toBe(
      ['[host."http://10.96.0.11:5000"]', '  capabilities = ["pull", "resolve"]', ''].join('\n'),
    );
  });
});
