import { describe, expect, it } from 'vitest';
import { ConfigError, parseManagerArgs } from '../../manager/config.ts';

describe('manager flags', () => {
  it('defaults: all namespaces, the journal under /var/lib, :8080, leader election on, DNS names', () => {
    const c = parseManagerArgs([], { POD_NAME: 'etcd-operator-abc', POD_NAMESPACE: 'ops' });
    expect(c).toMatchObject({
      journal: '/var/lib/etcd-operator/journal.db',
      listenHost: '0.0.0.0',
      listenPort: 8080,
      leaderElect: true,
      leaseName: 'etcd-operator',
      leaseNamespace: 'ops',
      etcdAddress: 'dns',
      identity: 'etcd-operator-abc',
      maxProbeIntervalMs: 120_000,
      secretReadIntervalMs: 60_000,
    });
    expect(c.namespace).toBeUndefined();
    expect(c.kubeconfig).toBeUndefined();
    expect(c.debugListen).toBeUndefined();
  });

  it('serves the debug page only when --debug-listen says where', () => {
    expect(parseManagerArgs(['--debug-listen', '127.0.0.1:8081'], {}).debugListen).toEqual({
      host: '127.0.0.1',
      port: 8081,
    });
    expect(parseManagerArgs(['--debug-listen=:0'], {}).debugListen).toEqual({ host: '0.0.0.0', port: 0 });
    expect(parseManagerArgs(['--debug-listen=[::1]:8081'], {}).debugListen).toEqual({ host: '::1', port: 8081 });
    expect(parseManagerArgs(['--debug-listen='], {}).debugListen).toBeUndefined();
  });

  it('takes --flag value and --flag=value, and a bare --leader-elect', () => {
    const c = parseManagerArgs(
      [
        '--namespace',
        'a',
        '--listen=127.0.0.1:0',
        '--leader-elect',
        '--etcd-address=pod-ip',
        '--agent-image',
        'x/etcd-operator:1',
      ],
      {},
    );
    expect(c).toMatchObject({
      namespace: 'a',
      listenHost: '127.0.0.1',
      listenPort: 0,
      leaderElect: true,
      etcdAddress: 'pod-ip',
      agentImage: 'x/etcd-operator:1',
    });
    expect(parseManagerArgs(['--leader-elect=false'], {}).leaderElect).toBe(false);
  });

  it('takes the longest wait between probes of a steady cluster in seconds: 15 probes as often as any cluster at rest', () => {
    expect(parseManagerArgs(['--max-probe-interval', '15'], {}).maxProbeIntervalMs).toBe(15_000);
    expect(parseManagerArgs(['--max-probe-interval=600'], {}).maxProbeIntervalMs).toBe(600_000);
  });

  it('takes how often TLS Secrets are read again in seconds', () => {
    expect(parseManagerArgs(['--secret-read-interval', '5'], {}).secretReadIntervalMs).toBe(5_000);
  });

  it("makes etcd Pods from quay.io's images, with no pull Secret and no requests of its own by default", () => {
    expect(parseManagerArgs([], {}).pods).toEqual({ etcdImageRepository: 'quay.io/coreos/etcd' });
  });

  it('takes a mirrored etcd repository, pull Secrets (repeated, each once) and other requests, or none', () => {
    const c = parseManagerArgs(
      [
        '--etcd-image-repository=mirror.example:5000/coreos/etcd',
        '--image-pull-secret',
        'mirror-pull',
        '--image-pull-secret=other',
        '--image-pull-secret=mirror-pull',
        '--member-requests',
        'cpu=1,memory=2Gi',
        '--job-requests=cpu=10m,memory=64Mi',
      ],
      {},
    );
    expect(c.pods).toEqual({
      etcdImageRepository: 'mirror.example:5000/coreos/etcd',
      imagePullSecrets: ['mirror-pull', 'other'],
      memberResources: { requests: { cpu: '1', memory: '2Gi' } },
      jobResources: { requests: { cpu: '10m', memory: '64Mi' } },
    });
    expect(parseManagerArgs(['--member-requests='], {}).pods.memberResources).toBeUndefined();
  });

  it.each([
    [['--etcd-image-repository', 'quay.io/coreos/etcd:v3.6.16'], 'want a repository without a tag'],
    [['--etcd-image-repository', 'quay.io/coreos/etcd@sha256:00'], 'want a repository without a tag'],
    [['--image-pull-secret', 'Bad_Name'], '--image-pull-secret Bad_Name: not a Secret name'],
    [['--member-requests', 'cpu'], '--member-requests cpu: want NAME=QUANTITY'],
    [['--job-requests', 'memory=lots'], '--job-requests memory=lots: want NAME=QUANTITY'],
    [['--nope', '1'], 'unknown flag --nope'],
    [['--nope'], 'unknown flag --nope'],
    [['--listen', '8080'], '--listen 8080: want HOST:PORT'],
    [['--listen', ':99999'], '--listen :99999: want HOST:PORT'],
    [['--debug-listen', '8081'], '--debug-listen 8081: want HOST:PORT'],
    [['--leader-elect=maybe'], '--leader-elect maybe: want true or false'],
    [['--etcd-address', 'ip'], '--etcd-address ip: want dns or pod-ip'],
    [['--log-level', 'loud'], '--log-level loud: want one of'],
    [['--journal'], '--journal needs a value'],
    [['--max-probe-interval', '5'], '--max-probe-interval 5: want whole seconds, 15 or more'],
    [['--max-probe-interval', '1m'], '--max-probe-interval 1m: want whole seconds, 15 or more'],
    [['--secret-read-interval', '0'], '--secret-read-interval 0: want whole seconds, 1 or more'],
    [['--secret-read-interval', '0.5'], '--secret-read-interval 0.5: want whole seconds, 1 or more'],
    [['stray'], "unexpected argument 'stray'"],
  ])('refuses %j with a message saying what is wrong', (argv, message) => {
    expect(() => parseManagerArgs(argv, {})).toThrow(ConfigError);
    expect(() => parseManagerArgs(argv, {})).toThrow(message);
  });
});
